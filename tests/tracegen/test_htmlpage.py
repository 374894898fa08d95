"""The report's HTML pieces (``tracegen/htmlpage.py``): every text escaped, pieces in order, and a page that is
the same bytes for the same parts, UTF-8 even for names that are not."""

from __future__ import annotations

from tracegen.htmlpage import definitions, join, page, paragraph, section, table, text


def test_text_escapes_markup_and_quotes() -> None:
    assert text("<a href='x'>\"&\"</a>") == "&lt;a href=&#x27;x&#x27;&gt;&quot;&amp;&quot;&lt;/a&gt;"
    assert text(1.5) == "1.5"


def test_pieces_by_hand() -> None:
    assert paragraph("a<b") == "<p>a&lt;b</p>"
    assert paragraph("x", 'w"arn') == '<p class="w&quot;arn">x</p>'
    assert section("H&", paragraph("1"), paragraph("2")) == "<section><h2>H&amp;</h2>\n<p>1</p>\n<p>2</p>\n</section>"
    assert definitions([("k<", "v>"), ("n", "1")]) == (
        '<dl class="inputs"><dt>k&lt;</dt><dd>v&gt;</dd><dt>n</dt><dd>1</dd></dl>')
    assert join([text("a"), text("b")], "|") == "a|b"
    assert table(["N", "x<"], [["1", "2"], ["3", "<4>"]], table_id="t") == (
        '<div class="scroll"><table id="t"><thead><tr><th>N</th><th>x&lt;</th></tr></thead>\n<tbody>\n'
        "<tr><td>1</td><td>2</td></tr>\n<tr><td>3</td><td>&lt;4&gt;</td></tr>\n</tbody></table></div>")


def test_a_page_is_deterministic_utf8_with_its_title_escaped() -> None:
    body = page("run \udcfe <1>", [paragraph("p")])
    assert body == page("run \udcfe <1>", [paragraph("p")])
    text_body = body.decode("utf-8")
    assert text_body.startswith("<!DOCTYPE html>\n") and text_body.endswith("</html>\n")
    assert "<title>run \\udcfe &lt;1&gt;</title>" in text_body and "<h1>run \\udcfe &lt;1&gt;</h1>" in text_body
    assert text_body.index("<h1>") < text_body.index("<p>p</p>") < text_body.index('<div id="tip">')
