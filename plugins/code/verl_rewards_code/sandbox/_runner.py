"""In-sandbox runner of one run (the cold path): build a minimal root in the mount namespace, then run the program.

Executed as ``python -I -S -c <_inside.py + this source> <config json>``
(``launch.runner_source``), as the first process inside the new namespaces
(PID 1 of the PID namespace when there is one), so it uses the standard
library only and never imports the package. Its building blocks are in
``_inside.py``, which the warm server (``_server.py``) shares.

It forks the program as its child, so the program is an ordinary process
(PID 1 ignores most signals, which would silently disable SIGXCPU) and the
runner, which the program cannot signal, stays in charge. The program's stderr
is a descriptor of its own (the runner's, shared with ``unshare``, is not).
When the runner exits, the kernel kills everything left in its PID namespace.
"""

import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # at run time these come from _inside.py, put in front of this source
    from ._inside import (
        SetupError,
        build_root,
        join_cgroups,
        limit_sysv_shm,
        pivot,
        report,
        run_and_report,
        start_program,
    )


def main() -> int:
    """Run the program described by the JSON config in ``sys.argv[1]``."""
    cfg = json.loads(sys.argv[1])
    fd = cfg["status_fd"]
    for name in ("stderr_fd", "lifeline_fd", "artifact_fd"):
        if cfg.get(name) is not None:
            os.set_inheritable(cfg[name], False)
    try:
        join_cgroups(cfg["cgroup_procs"])
    except OSError as e:
        report(fd, {"setup_error": f"joining the run's cgroup: {e}"})
        return 0
    if cfg["ipc_namespace"]:
        limit_sysv_shm(cfg["memory_bytes"])
    try:
        if cfg["mount"]:
            pivot(build_root(cfg, fresh_proc=False))
    except (OSError, SetupError) as e:
        report(fd, {"setup_error": f"mount namespace: {e}"})
        return 0
    return run_and_report(cfg, start_program)


sys.exit(main())
