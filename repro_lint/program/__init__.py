"""Phase two, per project: the modules' facts joined into programs. `model` builds the project model
(entry points, what each program reaches, trains, seeds) of `programs`, with its `call_graph` and
what runs in which of a program's `processes`; `symbols` and `module_names` resolve names
across modules; `checkpoints` follows what a program saves and restores; `worker_hazards` which
generators DataLoader workers copy; `declared` what a project declares outside Python (torch
version, read from its requirement files by `requirements`; launch-script variables); `fixes` the
findings and fixes of program rules.

May import `facts`, `core` and `knowledge`; never a rule, nor the engine."""
