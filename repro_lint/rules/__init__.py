"""The rules, one module per family, each rule a short class that reads like its page in
`rules/REPxxx.md`. `base` is the rule API; `registry` imports every family and holds the registry.

May import `program`, `facts`, `core` and `knowledge`: rules read facts and the program model, never
the engine that runs them."""
