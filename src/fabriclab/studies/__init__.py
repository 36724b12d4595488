"""The seed studies as runnable recipes: what each runs, the figures it draws beside the published values, and its findings judged on your runs."""
