"""Vertical writing in PDFs: when a page's rows are columns read across, and the columns' order."""

from __future__ import annotations

from omni_web.book.pdflayout import Line
from omni_web.book.pdfvertical import columns_as_lines, reads_down


def _line(text: str, x0: float, y0: float, y1: float, size: float = 10.0) -> Line:
    return Line(text=text, size=size, x0=x0, x1=x0 + size, y0=y0, y1=y1)


def test_rows_of_single_cjk_letters_read_down_and_japanese_prose_does_not() -> None:
    across = [_line("み す ん べ な て の が お わ の た お く の し の の な 中", 0, 700, 710)] * 2
    assert reads_down(across)
    prose = [_line("わたくしといふ現象は假定された有機交流電燈のひとつの青い照明です", 0, 700, 710)] * 2
    assert not reads_down(prose)
    assert not reads_down([_line("a b c d e f g h i j k l m n o p q r s t u v w x y z", 0, 700, 710)])


def test_columns_read_right_to_left_band_by_band_top_first() -> None:
    upper = [_line("二", 500, 500, 700), _line("一", 520, 500, 700), _line("三", 480, 520, 690)]
    lower = [_line("五", 500, 100, 300), _line("四", 520, 100, 300)]
    lines = columns_as_lines([*lower, *upper], page_height=800)
    assert [line.text for line in lines] == ["一", "二", "三", "四", "五"]
    assert all(a.y0 > b.y1 for a, b in zip(lines, lines[1:], strict=False))  # top to bottom
    gaps = [a.y0 - b.y1 for a, b in zip(lines, lines[1:], strict=False)]
    assert gaps[1] > gaps[0]  # the column starting lower ("三") opens a paragraph
    assert gaps[2] > gaps[0]  # so does the lower band
