"""A measurement judged against the network model: each collective, application exchange,
pair of the pair matrix and congestion impact set beside its prediction on the network
the run crossed, and the cable or host that a shortfall names."""
