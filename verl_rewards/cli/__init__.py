"""The ``verl-rewards`` command line: a thin layer over the library.

:mod:`.main` parses arguments and maps errors to exit codes (in
:mod:`.errors`, the one place that does); each subcommand is one module.
"""
