"""The site's own network: read from what it already keeps (ibnetdiscover, Slurm's topology), written as fabriclab network files, compared over time."""
