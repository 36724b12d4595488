"""The emulated cluster on one machine: network namespaces for hosts and
switches, veth cables shaped by tc, routes from the model's own routing,
and the ssh stand-in that lets MPI launch into them (docs/testbed.md)."""
