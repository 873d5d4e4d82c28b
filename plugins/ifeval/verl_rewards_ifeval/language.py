"""Language identification with langdetect (the library IFEval uses), made deterministic.

langdetect ships its 55 language profiles in the wheel: nothing is downloaded.
Its detector samples n-grams at random; IFEval calls ``langdetect.detect``
unseeded, so one text near a boundary can get two verdicts. Here every
detector is seeded (0), from a factory of our own: the process-wide
``langdetect.DetectorFactory`` and its seed are left alone.
"""

from __future__ import annotations

import functools
import threading

from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.lang_detect_exception import LangDetectException

SEED = 0
_lock = threading.Lock()
_factory: DetectorFactory | None = None


def _loaded_factory() -> DetectorFactory:
    global _factory
    with _lock:
        if _factory is None:
            factory = DetectorFactory()
            factory.load_profile(PROFILES_DIRECTORY)
            factory.set_seed(SEED)
            _factory = factory
        return _factory


def preload() -> None:
    """Load the profiles now (about a second) rather than inside the first sample's timeout."""
    _loaded_factory()


def supported_languages() -> tuple[str, ...]:
    """The codes langdetect can answer (ISO 639-1, plus ``zh-cn`` and ``zh-tw``)."""
    return tuple(sorted(_loaded_factory().get_lang_list()))


# Three instruction types ask for the language of the same text (and loose mode, of the
# same few variants): detect each once. str caches its hash, so a long key costs one pass.
@functools.lru_cache(maxsize=32)
def detect_language(text: str) -> str | None:
    """The language code of ``text``, or None when langdetect finds no feature to go on."""
    detector = _loaded_factory().create()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None
