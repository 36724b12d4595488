"""InfiniBand link rates: lanes (the width) times each lane's data rate (the speed),
after line coding, as ibnetdiscover names them ("4xHDR", "12x FDR", "1xSDR").

A lane's data rate is its signalling rate less the line code: 8b/10b for SDR, DDR
and QDR (InfiniBand Architecture Specification vol. 2, release 1.2.1, §5: 2.5, 5
and 10 Gb/s signalling); 64b/66b for FDR10, FDR and EDR (vol. 2 release 1.3,
§5: 14.0625 and 25.78125 Gb/s; FDR10 is Mellanox's 10.3125 Gb/s lane with
64b/66b, ConnectX-3 and SwitchX product briefs); and PAM4 with RS-FEC(544,514)
and 256b/257b transcoding from HDR on (vol. 2 releases 1.4 and 1.5, and the IBTA
roadmap: 4x HDR 200, 4x NDR 400, 4x XDR 800 Gb/s of data), where
544/514 x 257/256 = 17/16 of signalling per bit of data (iblinkinfo prints an HDR
lane as 53.125 Gbps: 53.125 x 16/17 = 50). A megabyte is 10^6 bytes, as
everywhere in the model (model/resources.py).
"""

from __future__ import annotations

import re

from ..errors import UsageError

# name: (signalling Gb/s per lane, data Gb/s per lane, where the figures come from)
SPEEDS = {
    "SDR": (2.5, 2.5 * 8 / 10, "IBTA spec vol. 2 rel. 1.2.1: 2.5 Gb/s, 8b/10b"),
    "DDR": (5.0, 5.0 * 8 / 10, "IBTA spec vol. 2 rel. 1.2.1: 5 Gb/s, 8b/10b"),
    "QDR": (10.0, 10.0 * 8 / 10, "IBTA spec vol. 2 rel. 1.2.1: 10 Gb/s, 8b/10b"),
    "FDR10": (10.3125, 10.3125 * 64 / 66, "Mellanox ConnectX-3 / SwitchX: 10.3125 Gb/s, 64b/66b"),
    "FDR": (14.0625, 14.0625 * 64 / 66, "IBTA spec vol. 2 rel. 1.3: 14.0625 Gb/s, 64b/66b"),
    "EDR": (25.78125, 25.78125 * 64 / 66, "IBTA spec vol. 2 rel. 1.3: 25.78125 Gb/s, 64b/66b"),
    "HDR": (53.125, 53.125 * 16 / 17, "IBTA spec vol. 2 rel. 1.4, roadmap: 4x HDR 200 Gb/s; PAM4, RS-FEC"),
    "NDR": (106.25, 106.25 * 16 / 17, "IBTA spec vol. 2 rel. 1.5, roadmap: 4x NDR 400 Gb/s; PAM4, RS-FEC"),
    "XDR": (212.5, 212.5 * 16 / 17, "IBTA roadmap: 4x XDR 800 Gb/s; PAM4, RS-FEC"),
}
# width: lanes (IBTA spec vol. 1, PortInfo LinkWidthActive: 1x, 4x, 8x, 12x; 2x since rel. 1.4)
WIDTHS = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}

_TOKEN = re.compile(r"(\d{1,2})[xX] ?([A-Za-z0-9]{1,8})")


def lane_Gbps(speed: str) -> float:
    """A lane's data rate in Gb/s."""
    return SPEEDS[speed][1]


def rate_MBps(width: str, speed: str) -> float:
    """The data rate of a link of `width` (e.g. '4X') at `speed` (e.g. 'HDR'), in MB/s
    (10^6 bytes per second), each direction."""
    if width not in WIDTHS or speed not in SPEEDS:
        raise UsageError(f"unknown InfiniBand width or speed {width!r} x {speed!r}")
    return WIDTHS[width] * SPEEDS[speed][1] * 1e3 / 8


def parse_width(text: str) -> str:
    """'4x', '4X' -> '4X'."""
    w = text.upper()
    if w not in WIDTHS:
        raise UsageError(f"unknown InfiniBand width {text[:20]!r} (known: {', '.join(WIDTHS)})")
    return w


def parse_speed(text: str) -> str:
    """'HDR', 'hdr' -> 'HDR'."""
    s = text.upper()
    if s not in SPEEDS:
        raise UsageError(f"unknown InfiniBand speed {text[:20]!r} (known: {', '.join(SPEEDS)})")
    return s


def parse_active(token: str) -> tuple[str, str]:
    """ibnetdiscover's active width and speed, '4xHDR' or '4x HDR' -> ('4X', 'HDR')."""
    m = _TOKEN.fullmatch(token)
    if not m:
        raise UsageError(f"not an InfiniBand width and speed: {token[:20]!r} (e.g. 4xHDR)")
    return parse_width(m.group(1) + "X"), parse_speed(m.group(2))


def shown(width: str, speed: str) -> str:
    """'4X HDR'."""
    return f"{width} {speed}"
