"""Arc on VERL: the reward module a VERL job scores with, and the check of the configuration Arc compiles."""
