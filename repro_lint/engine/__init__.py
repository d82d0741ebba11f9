"""Running repro-lint over files and projects: settings from configuration files (`config`,
`line_length`), which files to lint (`discovery`), the cache of analyses and of the last run
(`cache`), worker processes (`workers`), the stages from reading to the project pass (`modules`,
`closure`, `engine`, `last_run`), applying and writing fixes (`fixes`, `fixing`), a long run's progress on a
terminal (`progress`, drawn by `progress_bar`), and `pipeline`, whose functions read as the stages
in order.

May import `sources`, `analysis`, `rules`, `program`, `facts` and `core`; front-ends and `output`
call it."""
