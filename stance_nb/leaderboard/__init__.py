"The leaderboard: one table over datasets and systems with significance, built from the runs' results."
# Hand-written (not exported). A package over results (MTEB's `mteb/leaderboard/` layout), bottom up:
# `spec` (systems as meta records, the datasets as a declared benchmark), `params` (`LeaderboardArgs`), `build` (pure:
# results -> table and tests), `render` (Markdown, HTML, figures; it runs nothing), `run` (the jobs, through the experiment
# layer) and `imported` (committed tables of earlier runs). Import what you need from its module.
