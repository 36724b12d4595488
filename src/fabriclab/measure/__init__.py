"""Running the core: a request in, the run's document out: the plan of launches, the core's build and
protocol, the launchers of each MPI, the runner and its timeouts, and what a launch leaves behind."""
