"""Phase one, per file: what one module says, read from its LibCST tree in the single traversal that
also runs the rules.

- `context` is what a visitor sees (names in scope, ancestors, node edits), walked by `traversal`;
  `names` resolves qualified names; `module_index` indexes a module's bindings and parents.
- Randomness and seeding: `events`, `seed_values`, `seed_option`, `random_state`.
- Data loading: `datasets` (reading the records of `dataset_records`), `dataloader_calls`, and
  `dataflow`, which follows values of arbitrary order to their first order-dependent use.
- Checkpoints: `checkpoints` (what is saved and restored), read by `checkpoint_collector`, which
  traces values in `checkpoint_values`.
- How code runs: `launches`, `training_context`.
- `module_facts` gathers the facts the project pass needs into one picklable `ModuleFacts`; `shift`
  compares two versions of them; `fix_points`, `edits` and `import_block` say where and how a fix
  edits.

May import `core` and `knowledge` only."""
