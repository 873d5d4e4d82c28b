"""Ship a plugin's package to workers that do not have it installed.

The driver zips the plugin's top-level package once; each worker unpacks it
into a directory named by the archive's hash and puts that on ``sys.path``,
so the plugin still imports under its real module name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import sys
import tempfile
import zipfile
from pathlib import Path

from ..errors import ExecutorError
from ..reference import RewardRef

MAX_BYTES = 64 * 1024 * 1024


def pack(ref: RewardRef) -> bytes:
    """Zip the top-level package that ``ref``'s module belongs to."""
    top = ref.module_name.split(".")[0]
    spec = importlib.util.find_spec(top)
    if spec is None:
        raise ExecutorError(f"cannot ship {ref.display_name}: module '{top}' is not importable here")
    if spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        files = [p for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
        base = root.parent
    elif spec.origin:
        files, base = [Path(spec.origin)], Path(spec.origin).parent
    else:
        raise ExecutorError(f"cannot ship {ref.display_name}: '{top}' has no files to ship")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(base).as_posix())
    data = buffer.getvalue()
    if len(data) > MAX_BYTES:
        raise ExecutorError(f"cannot ship {ref.display_name}: its package is {len(data)} bytes zipped")
    return data


def unpack(data: bytes) -> Path:
    """Unpack a shipped package (once per content) and put it on ``sys.path``."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / "verl_rewards_shipped" / digest
    if not target.exists():
        staging = Path(tempfile.mkdtemp(prefix=f"{digest}-", dir=target.parent if target.parent.exists() else None))
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.extractall(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(target)
        except OSError:  # another worker on this node unpacked it first
            pass
    if str(target) not in sys.path:
        sys.path.insert(0, str(target))
    return target
