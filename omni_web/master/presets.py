"""Delivery presets: every loudness and delivery number the mastering uses, in one place.

The delivery specifications these follow: ACX asks RMS -23..-18 dB, peaks at most
-3 dB, a noise floor at most -60 dB RMS (quietest 500 ms), 0.5-1 s of room tone at the head and 1-5 s
at the tail of each file, MP3 192 kbit/s CBR 44.1 kHz, at most 120 minutes per file, credits and a
1-5 minute retail sample. EBU R128 asks -23 LUFS and -1 dBTP; Apple Podcasts -16 LUFS and -1 dBTP.
-20 LUFS / -3 dBTP meets ACX's RMS window for speech and Findaway's and Spotify's ranges at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from omni_web.errors import SettingsError

__all__ = ["DEFAULT_PRESET", "PRESETS", "PRESET_NAMES", "LoudnessPreset", "get_preset"]


@dataclass(frozen=True, slots=True)
class LoudnessPreset:
    """What a mastered chapter must measure, and how it is delivered.

    ``master`` False (the ``off`` preset) keeps every chunk at the level it came back at and the
    pauses as digital silence; chapters are still encoded as they finish and joined by stream copy.
    """

    name: str
    label: str
    master: bool = True
    target_lufs: float = -20.0
    tolerance_lu: float = 1.0
    max_true_peak_db: float = -3.0
    # Loudness range allowed inside a chapter; leveled speech measures 3-8 LU.
    max_lra_lu: float = 12.0
    rms_range_db: tuple[float, float] | None = None
    noise_floor_range_db: tuple[float, float] = (-75.0, -60.0)
    room_tone_db: float = -68.0
    head_ms: int = 0
    tail_ms: int | None = None  # None: the user's pause between chapters
    acx: bool = False

    def tail_for(self, pause_between_chapters_ms: int) -> int:
        """Room tone at a chapter's end: the preset's own, else the user's chapter pause."""
        return self.tail_ms if self.tail_ms is not None else pause_between_chapters_ms

    @property
    def true_peak_ceiling_db(self) -> float:
        """The true peak loudnorm is asked for: under the limit by what AAC and MP3 encoding can add
        to the peaks (ACX measures the encoded file)."""
        return self.max_true_peak_db - 0.8

    @property
    def limiter_ceiling_db(self) -> float:
        """The sample-peak limiter before measuring: 1.8 dB under the limit leaves room for
        inter-sample peaks and for loudnorm's final gain, so its linear mode holds."""
        return self.max_true_peak_db - 1.8


# ACX's delivery rules (the ``acx`` preset checks and writes these).
ACX_MP3_KBPS = 192
ACX_SAMPLE_RATE_HZ = 44100
ACX_MAX_FILE_S = 120 * 60
ACX_SAMPLE_S = (60.0, 300.0)

PRESETS: dict[str, LoudnessPreset] = {
    preset.name: preset
    for preset in (
        LoudnessPreset(
            "audiobook", "Audiobook: -20 LUFS, -3 dBTP (meets ACX levels)", rms_range_db=(-23.0, -18.0)
        ),
        LoudnessPreset(
            "acx",
            "ACX / Audible: audiobook levels + 192 kbit/s MP3 files, credits, retail sample",
            rms_range_db=(-23.0, -18.0),
            head_ms=750,
            tail_ms=2000,
            acx=True,
        ),
        LoudnessPreset(
            "r128", "EBU R128 broadcast: -23 LUFS, -1 dBTP", target_lufs=-23.0, max_true_peak_db=-1.0
        ),
        LoudnessPreset("podcast", "Podcast: -16 LUFS, -1 dBTP", target_lufs=-16.0, max_true_peak_db=-1.0),
        LoudnessPreset("off", "Off: levels as the server returned them", master=False),
    )
}
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)
DEFAULT_PRESET = "audiobook"


def get_preset(name: str | None) -> LoudnessPreset:
    """The preset called ``name`` (case-insensitive; None or "" = the default).

    Raises:
        SettingsError: an unknown name, listing the valid ones.
    """
    key = (name or DEFAULT_PRESET).strip().lower()
    try:
        return PRESETS[key]
    except KeyError:
        raise SettingsError(
            f"Unknown loudness preset '{name}'. Choose one of: {', '.join(PRESET_NAMES)}."
        ) from None
