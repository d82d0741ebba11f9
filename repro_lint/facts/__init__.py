"""Phase one, per file: what one module says, read from its LibCST tree in the single traversal that
also runs the rules. `context` is what a visitor sees (names in scope, ancestors, node edits);
`names` resolves qualified names; `events`, `seed_values`, `seed_option` and `random_state` are about
randomness and seeding; `datasets`, `dataloader_calls` and `dataflow` about data loading;
`checkpoints` about what is saved and restored (read by `checkpoint_collector`, which traces
values in `checkpoint_values`); `launches` and `training_context` about how code
runs; `module_facts` gathers the facts the project pass needs into one picklable `ModuleFacts`;
`shift` compares two versions of them; `fix_points`, `edits` and `import_block` say where and how a
fix edits.

May import `core` and `knowledge` only."""
