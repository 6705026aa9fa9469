"""Tests for knowledge.extract (no database).

Every document is built here — PDFs with fpdf2, DOCX with python-docx, zips with zipfile — so the
tests exercise the real parsers on real files, and no binary fixture is checked in.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
import zlib

import docx
import pytest
from fpdf import FPDF
from fpdf.enums import EncryptionMethod
from pypdf import PdfReader

from knowledge.extract import (
    DOCX,
    HTML,
    MARKDOWN,
    MAX_BYTES,
    MAX_DOCX_UNCOMPRESSED,
    PDF,
    PLAIN,
    Extracted,
    ExtractError,
    Section,
    detect_type,
    extract,
    extract_text,
    split_plain,
)

# --------------------------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------------------------


def make_pdf(
    pages: list[str],
    *,
    owner_password: str | None = None,
    user_password: str | None = None,
    method: EncryptionMethod = EncryptionMethod.RC4,
) -> bytes:
    """A PDF with one page per entry (an empty string gives a blank page), core Helvetica font."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    if owner_password is not None:
        pdf.set_encryption(owner_password=owner_password, user_password=user_password, encryption_method=method)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def docx_bytes(document: docx.document.Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def make_policy_docx() -> bytes:
    document = docx.Document()
    document.add_paragraph("This handbook explains how the shop handles orders.")
    document.add_heading("Refunds", level=1)
    document.add_paragraph("Customers may return goods within 30 days.")
    document.add_heading("EU customers", level=2)
    document.add_paragraph("EU customers have a 14 day withdrawal right.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Country"
    table.cell(0, 1).text = "Return window"
    table.cell(1, 0).text = "Germany"
    table.cell(1, 1).text = "14 days"
    document.add_heading("增值税", level=1)
    document.add_paragraph("我们的价格已包含增值税。")
    document.add_heading("包装法", level=2)
    document.add_paragraph("本店已按照包装法注册。")
    return docx_bytes(document)


def zip_bytes(entries: dict[str, bytes]) -> bytes:
    """A zip of `entries`, the same bytes whenever it is made (an entry's time is fixed, not the
    clock's): a zip made while the tests are collected names a test, and the suite's processes
    must collect the same tests."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in entries.items():
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, content)
    return buffer.getvalue()


def paragraph(number: int, length: int = 300) -> str:
    """A distinct paragraph of exactly ``length`` characters."""
    head = f"Paragraph {number} "
    return head + "x" * (length - len(head))


def expect_error(code: str, status: int, call, *args, **kwargs) -> ExtractError:
    with pytest.raises(ExtractError) as info:
        call(*args, **kwargs)
    error = info.value
    assert error.code == code, error.detail
    assert error.http_status == status
    assert error.detail and error.detail.endswith(".")
    assert str(error) == error.detail
    return error


# --------------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------------


def test_pdf_one_section_per_page_with_heading_titles() -> None:
    data = make_pdf(
        [
            "Refund Policy\nCustomers may return goods within 30 days of delivery for a full refund.",
            "Shipping\nWe ship to all EU countries. Delivery takes 3-5 working days.",
            "Opening hours are Monday to Friday, nine to five, except on public holidays.",
        ]
    )
    result = extract("handbook.pdf", data)

    assert result.media_type == PDF
    assert result.doubtful is False
    assert result.sha256 == hashlib.sha256(data).hexdigest()
    assert [s.anchor for s in result.sections] == ["page-1", "page-2", "page-3"]
    # A short first line reads as a heading; a sentence does not, so page 3 gets a derived title.
    assert [s.title for s in result.sections] == ["Refund Policy", "Shipping", "handbook.pdf — page 3"]
    assert "within 30 days of delivery" in result.sections[0].body
    assert "Delivery takes 3-5 working days." in result.sections[1].body
    assert "Monday to Friday" in result.sections[2].body


def test_pdf_running_header_is_not_used_as_title() -> None:
    data = make_pdf(
        [
            "ACME Handbook\nFirst page talks about refunds and returns in detail.",
            "ACME Handbook\nSecond page talks about shipping and delivery times.",
        ]
    )
    result = extract("acme.pdf", data)
    assert [s.title for s in result.sections] == ["acme.pdf — page 1", "acme.pdf — page 2"]
    assert "refunds and returns" in result.sections[0].body
    assert "shipping and delivery" in result.sections[1].body


def test_pdf_blank_page_is_skipped_and_doubtful() -> None:
    data = make_pdf(["Warranty\nAll appliances carry a two year warranty from the date of purchase.", ""])
    result = extract("warranty.pdf", data)

    assert len(PdfReader(io.BytesIO(data)).pages) == 2
    assert result.doubtful is True
    assert [s.anchor for s in result.sections] == ["page-1"]
    assert "two year warranty" in result.sections[0].body


def test_pdf_page_with_almost_no_text_is_doubtful() -> None:
    data = make_pdf(["Delivery\nParcels are handed to the courier within one working day.", "p. 2"])
    result = extract("delivery.pdf", data)
    assert result.doubtful is True
    assert [s.anchor for s in result.sections] == ["page-1"]


def test_pdf_without_any_text_is_no_content() -> None:
    error = expect_error("no_content", 422, extract, "scan.pdf", make_pdf(["", ""]))
    assert "OCR" in error.detail


@pytest.mark.parametrize("method", [EncryptionMethod.RC4, EncryptionMethod.AES_128, EncryptionMethod.AES_256])
def test_pdf_with_user_password_is_refused(method: EncryptionMethod) -> None:
    data = make_pdf(
        ["Secret prices for wholesale customers only."], owner_password="owner", user_password="user", method=method
    )
    error = expect_error("pdf_encrypted", 422, extract, "prices.pdf", data)
    assert "unprotected copy" in error.detail


def test_pdf_with_empty_user_password_is_refused_although_pypdf_opens_it() -> None:
    data = make_pdf(["Terms of sale apply to every order placed in the shop."], owner_password="owner")
    # Why the module checks is_encrypted: pypdf silently decrypts with the empty password.
    reader = PdfReader(io.BytesIO(data))
    assert reader.is_encrypted
    assert "Terms of sale" in reader.pages[0].extract_text()

    error = expect_error("pdf_encrypted", 422, extract, "terms.pdf", data)
    assert "unprotected copy" in error.detail


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda data: data[:200], id="truncated-head"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated-half"),
        pytest.param(lambda data: b"%PDF-1.7\n" + bytes(range(256)) * 8, id="garbled"),
        pytest.param(lambda data: data.replace(b"/Pages", b"/Pagez"), id="broken-page-tree"),
    ],
)
def test_pdf_corrupt(mangle) -> None:
    data = mangle(make_pdf(["Some perfectly ordinary text on a perfectly ordinary page."]))
    error = expect_error("corrupt_file", 422, extract, "broken.pdf", data)
    assert "broken.pdf" in error.detail


def raw_pdf_with_stream(content: bytes) -> bytes:
    """A one-page PDF, written by hand, whose page content is ``content`` deflated.

    fpdf2 cannot be asked for a stream that inflates to 80 MB, so this builds the few objects
    of a minimal PDF (with a correct xref table) directly."""
    compressed = zlib.compress(content)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(compressed) + compressed + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


TEXT_OP = b"BT /F1 12 Tf 10 100 Td (Hidden after a long run of padding spaces) Tj ET\n"


def test_raw_pdf_builder_is_a_readable_pdf() -> None:
    result = extract("raw.pdf", raw_pdf_with_stream(b" " * 1000 + TEXT_OP))
    assert result.sections == [
        Section(title="raw.pdf — page 1", body="Hidden after a long run of padding spaces", anchor="page-1")
    ]


def test_pdf_decompression_bomb_is_refused() -> None:
    # 80 MB of content in an ~80 KB file: pypdf stops inflating at its 75 MB limit.
    data = raw_pdf_with_stream(b" " * 80_000_000 + TEXT_OP)
    assert len(data) < 1024 * 1024
    error = expect_error("archive_too_large", 422, extract, "bomb.pdf", data)
    assert "bomb.pdf" in error.detail


def test_pdf_extension_without_pdf_bytes_is_corrupt() -> None:
    expect_error("corrupt_file", 422, extract, "fake.pdf", b"this is just text pretending to be a pdf")


# --------------------------------------------------------------------------------------------
# DOCX
# --------------------------------------------------------------------------------------------


def test_docx_headings_tables_and_chinese() -> None:
    data = make_policy_docx()
    result = extract("policy.docx", data)

    assert result.media_type == DOCX
    assert result.doubtful is False
    assert [(s.title, s.anchor) for s in result.sections] == [
        ("policy.docx", "section-0-policydocx"),
        ("Refunds", "section-1-refunds"),
        ("EU customers", "section-2-eu-customers"),
        ("增值税", "section-3-增值税"),
        ("包装法", "section-4-包装法"),
    ]
    intro, refunds, eu, vat, packaging = result.sections
    assert intro.body == "This handbook explains how the shop handles orders."
    assert refunds.body == "Customers may return goods within 30 days."
    # The table belongs to the section it sits in, one row per line.
    assert eu.body == "EU customers have a 14 day withdrawal right.\n\nCountry | Return window\nGermany | 14 days"
    assert vat.body == "我们的价格已包含增值税。"
    assert packaging.body == "本店已按照包装法注册。"


def test_docx_title_style_counts_as_heading() -> None:
    document = docx.Document()
    document.add_heading("Store Guide", level=0)  # level 0 is the "Title" style
    document.add_paragraph("Everything a customer needs to know.")
    result = extract("guide.docx", docx_bytes(document))
    assert [(s.title, s.anchor, s.body) for s in result.sections] == [
        ("Store Guide", "section-1-store-guide", "Everything a customer needs to know.")
    ]


def test_docx_without_headings_uses_paragraph_windows() -> None:
    document = docx.Document()
    for number in range(1, 11):
        document.add_paragraph(paragraph(number))
    result = extract("notes.docx", docx_bytes(document))

    assert [s.anchor for s in result.sections] == ["para-1-3", "para-4-6", "para-7-9", "para-10-10"]
    assert [s.title for s in result.sections] == [f"notes.docx — part {n}" for n in range(1, 5)]
    assert result.sections[0].body == "\n\n".join(paragraph(n) for n in (1, 2, 3))
    assert result.sections[3].body == paragraph(10)


def test_docx_zip_bomb_is_refused_without_decompressing(monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = zip_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"\0" * (60 * 1024 * 1024)})
    assert len(bomb) < 1024 * 1024  # ~60 KB on the wire

    def must_not_open(*args: object, **kwargs: object) -> None:
        pytest.fail("python-docx was called on a zip bomb")

    def must_not_inflate(*args: object, **kwargs: object) -> None:
        pytest.fail("an entry of the zip bomb was opened")

    monkeypatch.setattr(docx, "Document", must_not_open)
    # The central directory alone decides: no entry is opened (ZipFile.read goes through open).
    monkeypatch.setattr(zipfile.ZipFile, "open", must_not_inflate)
    error = expect_error("archive_too_large", 422, extract, "bomb.docx", bomb)
    assert "bomb.docx" in error.detail


def test_docx_too_much_declared_content_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each entry stays under the 1 MB bomb threshold; only their sum exceeds the limit.
    entry = b"\0" * 1_000_000
    count = MAX_DOCX_UNCOMPRESSED // len(entry) + 2
    entries = {"word/document.xml": b"<w:document/>"} | {f"word/media/blob{i}.bin": entry for i in range(count)}
    monkeypatch.setattr(docx, "Document", lambda *a, **k: pytest.fail("python-docx was called"))
    expect_error("archive_too_large", 422, extract, "many.docx", zip_bytes(entries))


def test_docx_random_bytes_are_corrupt() -> None:
    error = expect_error("corrupt_file", 422, extract, "report.docx", bytes(range(7, 200)) * 20)
    assert "report.docx" in error.detail


def test_docx_zip_without_document_xml_is_corrupt() -> None:
    expect_error("corrupt_file", 422, extract, "empty.docx", zip_bytes({"hello.txt": b"hi"}))


def test_docx_unparseable_document_is_corrupt() -> None:
    # word/document.xml is present (so it is detected as DOCX) but python-docx cannot open it.
    data = zip_bytes({"word/document.xml": b"<not really xml"})
    assert detect_type("odd.docx", data) == DOCX
    expect_error("corrupt_file", 422, extract, "odd.docx", data)


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------

MARKDOWN_DOC = """\
Welcome to **our shop**. We sell *handmade* goods.

# Returns

You can return items within `30` days.

- unused items only
- keep the [receipt](https://example.com/receipt)

## Damaged goods

Send us a photo.

1. Email support
2. Wait for a label

# 增值税 与 发票

所有价格均含增值税。

```
code keeps   its text
```
"""


def test_markdown_splits_on_headings_of_any_level() -> None:
    data = MARKDOWN_DOC.encode()
    result = extract("guide.md", data)

    assert result.media_type == MARKDOWN
    assert [(s.title, s.anchor) for s in result.sections] == [
        ("guide.md", "section-0-guidemd"),
        ("Returns", "section-1-returns"),
        ("Damaged goods", "section-2-damaged-goods"),
        ("增值税 与 发票", "section-3-增值税-与-发票"),
    ]
    intro, returns, damaged, vat = result.sections
    assert intro.body == "Welcome to our shop. We sell handmade goods."
    assert returns.body == "You can return items within 30 days.\n\n• unused items only\n• keep the receipt"
    # The subsection's text is not repeated in its parent.
    assert "photo" not in returns.body
    assert damaged.body == "Send us a photo.\n\n1. Email support\n2. Wait for a label"
    assert vat.body.startswith("所有价格均含增值税。")
    assert "code keeps its text" in vat.body
    for section in result.sections:
        assert "#" not in section.body and "**" not in section.body and "`" not in section.body


def test_markdown_heading_without_body_keeps_numbering() -> None:
    text = "# Policies\n## Refunds\nMoney back in 30 days.\n## Shipping\nFree over 50 euros.\n"
    result = extract("p.markdown", text.encode())
    assert [(s.title, s.anchor, s.body) for s in result.sections] == [
        ("Refunds", "section-2-refunds", "Money back in 30 days."),
        ("Shipping", "section-3-shipping", "Free over 50 euros."),
    ]


def test_markdown_table_and_setext_heading() -> None:
    text = "Sizes\n=====\n\n| Size | Chest |\n|------|-------|\n| M | 100 cm |\n| L | 108 cm |\n"
    result = extract("sizes.md", text.encode())
    assert result.sections == [
        Section(title="Sizes", body="Size | Chest\nM | 100 cm\nL | 108 cm", anchor="section-1-sizes")
    ]


def test_markdown_without_headings_is_windowed_as_plain_text() -> None:
    text = "First **bold** paragraph.\n\nSecond paragraph.\n"
    result = extract("notes.md", text.encode())
    assert result.media_type == MARKDOWN
    assert result.sections == [
        Section(title="notes.md", body="First bold paragraph.\n\nSecond paragraph.", anchor="para-1-2")
    ]


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

HTML_DOC = """<!doctype html>
<html><head><title>Shop FAQ</title><style>body { color: red }</style></head>
<body>
<nav><a href="/">Home</a> <a href="/faq">FAQ</a></nav>
<p>Answers to   common
   questions.</p>
<script>var secret = "do not index";</script>
<h1>Payment</h1>
<p>We accept cards and <b>bank transfer</b>.</p>
<ul><li>Visa</li><li>Mastercard</li></ul>
<h2>Invoices</h2>
<table><tr><th>Item</th><th>VAT</th></tr><tr><td>Books</td><td>7%</td></tr></table>
<pre>IBAN  DE00
BIC   XXXX</pre>
<!-- a comment that must not appear -->
<footer>Copyright 2025 ACME</footer>
</body></html>
"""


def test_html_drops_scripts_and_splits_on_headings() -> None:
    result = extract("faq.html", HTML_DOC.encode())

    assert result.media_type == HTML
    assert [(s.title, s.anchor) for s in result.sections] == [
        ("faq.html", "section-0-faqhtml"),
        ("Payment", "section-1-payment"),
        ("Invoices", "section-2-invoices"),
    ]
    intro, payment, invoices = result.sections
    assert intro.body == "Answers to common questions."
    assert payment.body == "We accept cards and bank transfer.\n\nVisa\n\nMastercard"
    assert invoices.body.startswith("Item | VAT\nBooks | 7%")
    assert "IBAN DE00\nBIC XXXX" in invoices.body
    everything = " ".join(s.body + s.title for s in result.sections)
    for dropped in ("secret", "color: red", "Home", "Copyright", "comment", "Shop FAQ"):
        assert dropped not in everything


def test_html_without_headings_uses_paragraph_windows() -> None:
    body = "".join(f"<p>{paragraph(n)}</p>" for n in range(1, 6))
    result = extract("page.htm", f"<html><body>{body}</body></html>".encode())
    assert [s.anchor for s in result.sections] == ["para-1-3", "para-4-5"]
    assert [s.title for s in result.sections] == ["page.htm — part 1", "page.htm — part 2"]
    assert result.sections[1].body == paragraph(4) + "\n\n" + paragraph(5)


def test_html_only_scripts_is_no_content() -> None:
    expect_error("no_content", 422, extract, "x.html", b"<script>alert(1)</script><style>p{}</style>")


# --------------------------------------------------------------------------------------------
# Plain text and split_plain
# --------------------------------------------------------------------------------------------


def test_plain_text_paragraph_windows() -> None:
    text = "\n\n".join(paragraph(n) for n in range(1, 8)) + "\n"
    result = extract("faq.txt", text.encode())
    assert result.media_type == PLAIN
    assert [(s.title, s.anchor) for s in result.sections] == [
        ("faq.txt — part 1", "para-1-3"),
        ("faq.txt — part 2", "para-4-6"),
        ("faq.txt — part 3", "para-7-7"),
    ]
    assert result.sections[1].body == "\n\n".join(paragraph(n) for n in (4, 5, 6))


def test_split_plain_single_section_uses_plain_title() -> None:
    assert split_plain("Opening hours", "Mon–Fri 9–17.\n\n\n\nSat 10–14.") == [
        Section(title="Opening hours", body="Mon–Fri 9–17.\n\nSat 10–14.", anchor="para-1-2")
    ]


def test_split_plain_window_and_long_paragraph() -> None:
    long = "y" * 500
    sections = split_plain("T", f"short one\n\n{long}\n\nshort two", window=100)
    assert [(s.anchor, s.body) for s in sections] == [
        ("para-1-1", "short one"),
        ("para-2-2", long),  # never cut mid-paragraph
        ("para-3-3", "short two"),
    ]
    with pytest.raises(ValueError):
        split_plain("T", "x", window=0)


def test_text_is_normalised_and_chinese_survives() -> None:
    decomposed = "Cafe\u0301  menu\t\tprices   \r\nline\x07two\u3000全角 空格   \r\n\r\n\r\n\r\n增值税和包装法"
    result = extract("menu.txt", decomposed.encode())
    assert result.sections == [
        Section(title="menu.txt", body="Café menu prices\nlinetwo\u3000全角 空格\n\n增值税和包装法", anchor="para-1-2")
    ]


def test_utf8_bom_is_accepted_and_removed() -> None:
    result = extract("bom.txt", "\ufeffHello with a byte order mark.".encode())
    assert result.sections[0].body == "Hello with a byte order mark."


# --------------------------------------------------------------------------------------------
# extract_text (JSON ingests)
# --------------------------------------------------------------------------------------------


def test_extract_text_with_headings_is_markdown() -> None:
    text = "Intro line.\n\n## 包装法\n\n本店已注册。\n\n## Returns\n\n30 **days**.\n"
    result = extract_text("Shop rules", text)
    assert result.media_type == MARKDOWN
    assert result.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert [(s.title, s.anchor, s.body) for s in result.sections] == [
        ("Shop rules", "section-0-shop-rules", "Intro line."),
        ("包装法", "section-1-包装法", "本店已注册。"),
        ("Returns", "section-2-returns", "30 days."),
    ]


def test_extract_text_without_headings_is_plain() -> None:
    result = extract_text("Hours", "Open daily.\n\nClosed on 25 December.")
    assert result.media_type == PLAIN
    assert result.doubtful is False
    assert result.sections == [Section(title="Hours", body="Open daily.\n\nClosed on 25 December.", anchor="para-1-2")]


def test_extract_text_empty_and_too_large() -> None:
    expect_error("no_content", 422, extract_text, "Blank", "  \n\n \t ")
    expect_error("too_large", 413, extract_text, "Big", "z" * 101, max_bytes=100)


# --------------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------------


def test_magic_bytes_win_over_a_lying_extension() -> None:
    pdf = make_pdf(["Lying Name\nThis PDF was uploaded with a .txt name by mistake."])
    assert detect_type("notes.txt", pdf) == PDF
    result = extract("notes.txt", pdf, declared_type="text/plain")
    assert result.media_type == PDF
    assert "uploaded with a .txt name" in result.sections[0].body

    word = make_policy_docx()
    assert detect_type("policy.html", word, "text/html") == DOCX
    assert extract("policy.html", word).sections[1].anchor == "section-1-refunds"


@pytest.mark.parametrize(
    "filename, data, declared, expected",
    [
        ("a.txt", b"plain", None, PLAIN),
        ("A.MD", b"# x", None, MARKDOWN),
        ("a.markdown", b"# x", None, MARKDOWN),
        ("a.HTM", b"<p>x</p>", None, HTML),
        ("a.html", b"<p>x</p>", None, HTML),
        ("C:\\Users\\me\\a.pdf", b"%PDF-1.4", None, PDF),
        ("a.docx", b"not a zip", None, DOCX),  # refused later as corrupt_file
        ("upload", b"# From an API", "text/markdown; charset=utf-8", MARKDOWN),
        ("upload.bin", b"<p>x</p>", "text/html", HTML),
        ("MZ.txt", b"MZ Logistics delivers on Tuesdays.", None, PLAIN),  # "MZ" text is not a program
    ],
)
def test_detect_type(filename: str, data: bytes, declared: str | None, expected: str) -> None:
    assert detect_type(filename, data, declared) == expected


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + b"\x00" * 48 + b"PE\x00\x00"


@pytest.mark.parametrize(
    "filename, data, declared",
    [
        ("setup.exe", EXE, "application/octet-stream"),
        ("readme.txt", EXE, "text/plain"),
        ("photo.png", PNG, "image/png"),
        ("photo.txt", PNG, "text/plain"),
        ("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", None),
        ("archive.zip", zip_bytes({"a.txt": b"hello"}), None),
        ("data.csv", b"a,b\n1,2\n", None),
        ("data.csv", b"a,b\n1,2\n", "text/csv"),
        ("upload", b"\xe9t\xe9", "text/plain"),  # only the declared type says text, and it is not UTF-8
    ],
)
def test_unsupported_types(filename: str, data: bytes, declared: str | None) -> None:
    error = expect_error("unsupported_type", 415, extract, filename, data, declared_type=declared)
    assert ".docx" in error.detail  # tells what would be accepted
    expect_error("unsupported_type", 415, detect_type, filename, data, declared)


@pytest.mark.parametrize(
    "filename, data",
    [
        ("latin1.txt", "Preise für Getränke".encode("latin-1")),
        ("utf16.md", "# Heading".encode("utf-16")),
        ("utf16-nobom.html", "<p>hi</p>".encode("utf-16-le")),
    ],
)
def test_text_that_is_not_utf8_is_corrupt(filename: str, data: bytes) -> None:
    error = expect_error("corrupt_file", 422, extract, filename, data)
    assert "UTF-8" in error.detail


# --------------------------------------------------------------------------------------------
# Limits, empty input, determinism, hashing
# --------------------------------------------------------------------------------------------


def test_size_limit_is_checked_first() -> None:
    assert MAX_BYTES == 10 * 1024 * 1024
    error = expect_error("too_large", 413, extract, "big.txt", b"a" * 101, max_bytes=100)
    assert "big.txt" in error.detail
    # Even bytes that would be refused for their type are refused for their size first.
    expect_error("too_large", 413, extract, "setup.exe", EXE, max_bytes=10)
    assert extract("fits.txt", b"a" * 100, max_bytes=100).sections[0].body == "a" * 100


@pytest.mark.parametrize(
    "filename, data",
    [
        ("empty.txt", b""),
        ("empty.pdf", b""),
        ("blank.txt", b" \n\n\t \r\n"),
        ("blank.md", b"<!-- nothing -->\n\n---\n"),
    ],
)
def test_no_content(filename: str, data: bytes) -> None:
    expect_error("no_content", 422, extract, filename, data)


def test_docx_without_text_is_no_content() -> None:
    document = docx.Document()
    document.add_paragraph("   ")
    expect_error("no_content", 422, extract, "blank.docx", docx_bytes(document))


@pytest.mark.parametrize(
    "filename, builder",
    [
        ("a.pdf", lambda: make_pdf(["Page One\nSome text on the first page.", "Second page has more text."])),
        ("a.docx", make_policy_docx),
        ("a.md", lambda: MARKDOWN_DOC.encode()),
        ("a.html", lambda: HTML_DOC.encode()),
        ("a.txt", lambda: "\n\n".join(paragraph(n) for n in range(1, 9)).encode()),
    ],
)
def test_extraction_is_deterministic(filename: str, builder) -> None:
    data = builder()
    first, second = extract(filename, data), extract(filename, bytes(data))
    assert isinstance(first, Extracted)
    assert first == second
    assert first.sections and all(s.body.strip() and s.title and s.anchor for s in first.sections)
    assert len({s.anchor for s in first.sections}) == len(first.sections)  # anchors are unique
    assert first.sha256 == hashlib.sha256(data).hexdigest()


def test_sha256_is_of_raw_bytes() -> None:
    data = "\ufeffSame   words".encode()
    result = extract("a.txt", data)
    assert result.sha256 == hashlib.sha256(data).hexdigest()
    assert result.sha256 != extract("a.txt", b"Same words").sha256  # normalisation does not mask a change
    assert result.sections == extract("a.txt", b"Same words").sections


def test_error_status_mapping_and_unknown_code() -> None:
    assert ExtractError("too_large", "x.").http_status == 413
    assert ExtractError("unsupported_type", "x.").http_status == 415
    for code in ("pdf_encrypted", "corrupt_file", "archive_too_large", "no_content"):
        assert ExtractError(code, "x.").http_status == 422
    with pytest.raises(ValueError):
        ExtractError("nope", "x.")  # type: ignore[arg-type]
