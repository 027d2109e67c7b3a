"""Tools around Arc's PyTorch engine worker, run from Python alone: the bench, the real-model GPU check, the smoke
run, the transformers reference checker and the tool-call model maker (`python -m arc_tools.<name>`). They use
`arc_torch`; `arc_torch` never imports them."""
