"""Pure extraction of owner-supplied documents into titled, anchored sections.

Nothing here touches the database or Django: the module takes bytes (or a JSON text body) and
returns an :class:`Extracted` value, or raises :class:`ExtractError` with a machine-readable code,
an HTTP status and a sentence a person can act on.  Parsing is left to well-kept libraries
(pypdf, python-docx, BeautifulSoup with the stdlib ``html.parser``, markdown-it-py); this module
only decides what counts as a section and how it is named.

Everything is deterministic: the same bytes always give the same sections and anchors, so
re-ingesting an unchanged file can be recognised and produces identical output.
"""

from __future__ import annotations

import hashlib
import io
import re
import unicodedata
import zipfile
from collections import Counter
from dataclasses import dataclass
from typing import Literal

import docx
from bs4 import BeautifulSoup
from bs4.element import NavigableString, PageElement, PreformattedString, Tag
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph
from markdown_it import MarkdownIt
from markdown_it.token import Token
from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError, WrongPasswordError

from facade.errors import ApplicationError

__all__ = [
    "DOCX",
    "HTML",
    "MARKDOWN",
    "MAX_BYTES",
    "MAX_DOCX_UNCOMPRESSED",
    "PDF",
    "PLAIN",
    "ExtractError",
    "Extracted",
    "Limits",
    "Section",
    "detect_type",
    "extract",
    "extract_text",
    "precheck",
    "split_plain",
]

MAX_BYTES = 10 * 1024 * 1024
MAX_DOCX_UNCOMPRESSED = 50 * 1024 * 1024

PLAIN = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

# A zip entry that inflates more than this many times over, and to more than _BOMB_MIN_SIZE,
# is treated as a zip bomb.  Real Word XML compresses roughly 5–20×; 200× leaves a wide margin.
_BOMB_RATIO = 200
_BOMB_MIN_SIZE = 1024 * 1024

# A PDF page with fewer visible characters than this is most likely a scan or an image:
# we skip it and flag the extraction as doubtful so callers lower their confidence.
_MIN_PAGE_CHARS = 20

_TITLE_MAX = 200
_SLUG_MAX = 60

ErrorCode = Literal[
    "too_large",
    "unsupported_type",
    "pdf_encrypted",
    "corrupt_file",
    "archive_too_large",
    "no_content",
    "too_many_sections",
    "too_many_characters",
    "extraction_timeout",
    "extraction_out_of_memory",
    "extraction_failed",
]

_STATUS: dict[str, int] = {
    "too_large": 413,
    "unsupported_type": 415,
    "pdf_encrypted": 422,
    "corrupt_file": 422,
    "archive_too_large": 422,
    "no_content": 422,
    "too_many_sections": 422,
    "too_many_characters": 422,
    "extraction_timeout": 422,
    "extraction_out_of_memory": 422,
    "extraction_failed": 422,
}


class ExtractError(ApplicationError):
    """A document that cannot be turned into sections, with a reason an owner can act on; the
    code decides the status (a file too large is 413 wherever it is refused)."""

    def __init__(self, code: ErrorCode, detail: str) -> None:
        if code not in _STATUS:
            raise ValueError(f"unknown extract error code {code!r}")
        super().__init__(code, detail, _STATUS[code])


@dataclass(frozen=True)
class Section:
    title: str
    body: str
    anchor: str


@dataclass(frozen=True)
class Limits:
    """How much one document may become.  ``None`` is no limit; ``advice`` ends each refusal
    (where a larger document can go instead, or how to split it)."""

    max_sections: int | None = None
    max_chars: int | None = None
    advice: str = "Split it into smaller files and upload them separately."


NO_LIMITS = Limits()


def _too_many_sections(title: str, found: str, limits: Limits) -> ExtractError:
    return ExtractError(
        "too_many_sections",
        f"{title} has {found}; the limit is {limits.max_sections:,} sections per document. {limits.advice}",
    )


def _check_section_count(title: str, count: int, limits: Limits, what: str = "sections") -> None:
    if limits.max_sections is not None and count > limits.max_sections:
        raise _too_many_sections(title, f"{count:,} {what}", limits)


def _check_limits(title: str, sections: list[Section], limits: Limits) -> None:
    _check_section_count(title, len(sections), limits)
    if limits.max_chars is not None:
        chars = sum(len(section.title) + len(section.body) for section in sections)
        if chars > limits.max_chars:
            raise ExtractError(
                "too_many_characters",
                f"{title} has {chars:,} characters of text; the limit is {limits.max_chars:,} characters "
                f"per document. {limits.advice}",
            )


@dataclass(frozen=True)
class Extracted:
    sha256: str
    media_type: str
    sections: list[Section]
    doubtful: bool


# --------------------------------------------------------------------------------------------
# Text normalisation
# --------------------------------------------------------------------------------------------

# Horizontal whitespace that carries no meaning.  U+3000 (ideographic space) is deliberately
# absent: it is part of how Chinese and Japanese text is typeset, and we keep such text intact.
_SPACES = re.compile(r"[ \t\f\v\u00a0\u1680\u2000-\u200a\u202f\u205f]+")
# C0 controls (except tab/newline, handled above) never belong in prose, and PostgreSQL text
# columns reject NUL outright; PDFs in particular are prone to emitting them.
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_BLANK_RUNS = re.compile(r"\n{3,}")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _normalize(text: str) -> str:
    """NFC, one space for each run of spaces, no spaces at line ends, at most one blank line."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n\n")
    text = _CONTROLS.sub("", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()


def _one_line(text: str, limit: int = _TITLE_MAX) -> str:
    """A title: normalised, on one line, and short enough to show in a list."""
    line = " ".join(_normalize(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


_SLUG_DROP = re.compile(r"[^\w\s-]")
_SLUG_JOIN = re.compile(r"[\s_-]+")


def _slug(text: str) -> str:
    """URL-ish slug that keeps CJK (and other letters) as they are, so 增值税 stays readable."""
    slug = _SLUG_DROP.sub("", unicodedata.normalize("NFC", text).lower())
    slug = _SLUG_JOIN.sub("-", slug).strip("-")
    return slug[:_SLUG_MAX].rstrip("-")


def _section_anchor(n: int, heading: str) -> str:
    slug = _slug(heading)
    return f"section-{n}-{slug}" if slug else f"section-{n}"


def _doc_title(filename: str) -> str:
    # Browsers and some clients send a full client-side path; only the last part is a name.
    base = re.split(r"[\\/]", filename)[-1]
    return _one_line(base) or "document"


# --------------------------------------------------------------------------------------------
# Paragraph windows and heading splits (shared by every format)
# --------------------------------------------------------------------------------------------


def split_plain(title: str, text: str, *, window: int = 1200) -> list[Section]:
    """Group consecutive paragraphs (split on blank lines) into sections of about ``window`` chars.

    A paragraph is never cut in two, so a single paragraph longer than ``window`` becomes a
    section of its own; that keeps the ``para-<first>-<last>`` anchors exact.
    """
    if window <= 0:
        raise ValueError("window must be positive")
    title = _one_line(title) or "document"
    paragraphs = [p for p in (_normalize(chunk) for chunk in _PARAGRAPH_BREAK.split(_normalize(text))) if p]

    groups: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    length = 0
    for number, paragraph in enumerate(paragraphs, start=1):
        added = len(paragraph) + (2 if current else 0)  # 2 for the blank line that joins them
        if current and length + added > window:
            groups.append(current)
            current, length, added = [], 0, len(paragraph)
        current.append((number, paragraph))
        length += added
    if current:
        groups.append(current)

    sections = []
    for index, group in enumerate(groups, start=1):
        part_title = title if len(groups) == 1 else f"{title} — part {index}"
        sections.append(
            Section(
                title=part_title,
                body="\n\n".join(p for _, p in group),
                anchor=f"para-{group[0][0]}-{group[-1][0]}",
            )
        )
    return sections


@dataclass(frozen=True)
class _Heading:
    text: str


@dataclass(frozen=True)
class _Block:
    text: str


_Item = _Heading | _Block


def _split_on_headings(title: str, items: list[_Item], limits: Limits = NO_LIMITS) -> list[Section]:
    """Turn a flat stream of headings and text blocks into sections.

    Heading numbers count every heading in the document (1-based), not only those that end up
    with a body, so an anchor does not shift when an unrelated heading gains or loses text.
    Text before the first heading is section 0, titled after the document.
    """
    headings = [item for item in items if isinstance(item, _Heading) and _one_line(item.text)]
    # Refused before any section is built: each heading can become one, and a document of
    # hundreds of thousands of headings is the case this limit exists for.
    _check_section_count(title, len(headings), limits, "headings")
    if not headings:
        return split_plain(title, "\n\n".join(item.text for item in items if isinstance(item, _Block)))

    drafts: list[tuple[str, str, list[str]]] = [(title, _section_anchor(0, title), [])]
    number = 0
    for item in items:
        if isinstance(item, _Heading):
            heading = _one_line(item.text)
            if not heading:
                continue  # an empty heading paragraph is layout, not structure
            number += 1
            drafts.append((heading, _section_anchor(number, heading), []))
        else:
            drafts[-1][2].append(item.text)

    sections = []
    for heading, anchor, parts in drafts:
        body = _normalize("\n\n".join(parts))
        if body:  # a heading directly followed by another heading has nothing to cite
            sections.append(Section(title=heading, body=body, anchor=anchor))
    if sections:
        return sections
    # Only headings and no prose: the headings are the content.
    return split_plain(title, "\n\n".join(h.text for h in headings))


# --------------------------------------------------------------------------------------------
# Type detection
# --------------------------------------------------------------------------------------------

_EXTENSIONS: dict[str, str] = {
    ".txt": PLAIN,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
}

_DECLARED: dict[str, str] = {
    "text/plain": PLAIN,
    "text/markdown": MARKDOWN,
    "text/x-markdown": MARKDOWN,
    "text/html": HTML,
    "application/xhtml+xml": HTML,
    "application/pdf": PDF,
    DOCX: DOCX,
}

_TEXT_TYPES = frozenset({PLAIN, MARKDOWN, HTML})

# Signatures of common files people upload by mistake.  Each is distinctive enough that a real
# text file cannot start with it (they contain bytes invalid in UTF-8, or NUL) — except "MZ",
# which is checked together with a NUL in the DOS header.
_BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\x7fELF", "a program (ELF executable)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old-style Office file (.doc/.xls)"),
)

_SUPPORTED_HINT = "Upload a .txt, .md, .html, .pdf or .docx file."


def _extension(filename: str) -> str:
    base = re.split(r"[\\/]", filename)[-1].lower()
    dot = base.rfind(".")
    return base[dot:] if dot > 0 else ""


def _zip_names(data: bytes) -> list[str] | None:
    """Entry names of a zip, from its central directory only (nothing is decompressed)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        return None


def _binary_kind(data: bytes) -> str | None:
    for signature, kind in _BINARY_SIGNATURES:
        if data.startswith(signature):
            return kind
    if data.startswith(b"MZ") and b"\x00" in data[:64]:
        return "a Windows program"
    return None


def _decode_text(data: bytes) -> str | None:
    """UTF-8 (with or without BOM) or None.  NUL bytes mean UTF-16 or binary, not text."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _detect(filename: str, data: bytes, declared: str | None) -> tuple[str, str | None]:
    """(media type, decoded text for text types).  Decoding is done once, here."""
    # Magic bytes first: what a file *is* beats what it is called.
    if data.startswith(b"%PDF-"):
        return PDF, None
    ext = _extension(filename)
    if data.startswith(b"PK\x03\x04"):
        names = _zip_names(data)
        if names is not None and "word/document.xml" in names:
            return DOCX, None
        if ext != ".docx":  # a .docx that is a broken zip is reported as corrupt further on
            raise ExtractError(
                "unsupported_type",
                f"{_doc_title(filename)} is a ZIP archive, not a Word document. {_SUPPORTED_HINT}",
            )
    kind = _binary_kind(data)
    if kind is not None:
        raise ExtractError("unsupported_type", f"{_doc_title(filename)} looks like {kind}. {_SUPPORTED_HINT}")

    media_type = _EXTENSIONS.get(ext)
    from_extension = media_type is not None
    if media_type is None and declared:
        media_type = _DECLARED.get(declared.split(";", 1)[0].strip().lower())
    if media_type is None:
        raise ExtractError(
            "unsupported_type",
            f"{_doc_title(filename)} is not a supported kind of document. {_SUPPORTED_HINT}",
        )
    if media_type not in _TEXT_TYPES:
        return media_type, None

    text = _decode_text(data)
    if text is None:
        if from_extension:
            raise ExtractError(
                "corrupt_file",
                f"{_doc_title(filename)} is not UTF-8 text. Save it again with UTF-8 encoding and re-upload it.",
            )
        raise ExtractError(
            "unsupported_type",
            f"{_doc_title(filename)} is not UTF-8 text and its name does not say what it is. {_SUPPORTED_HINT}",
        )
    return media_type, text


def detect_type(filename: str, data: bytes, declared: str | None = None) -> str:
    """Media type of an upload: magic bytes first, then the extension, then the declared type."""
    return _detect(filename, data, declared)[0]


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------


def _markdown_tokens(text: str) -> list[Token]:
    # CommonMark plus GFM tables; no linkify/typographer so output does not depend on extras.
    return MarkdownIt("commonmark").enable("table").parse(text)


def _markdown_inline(token: Token) -> str:
    """Plain text of an inline token: emphasis/link markup dropped, code and image alt kept."""
    out: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "text_special"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            # Keep the author's line break: a space would wedge into Chinese text.
            out.append("\n")
        elif child.type == "image":
            out.append(child.content)  # the alt text
    return "".join(out)


def _markdown_items(tokens: list[Token]) -> list[_Item]:
    items: list[_Item] = []
    list_lines: list[str] = []  # lines of the outermost open list, emitted as one block
    list_depth = 0
    item_prefix = ""  # "1. " / "• " waiting for the first line of a list item
    row: list[str] | None = None
    table_rows: list[str] = []
    in_heading = False

    def add(text: str) -> None:
        nonlocal item_prefix
        if row is not None:
            row.append(" ".join(text.split()))
        elif list_depth:
            list_lines.append(item_prefix + text)
            item_prefix = ""
        else:
            items.append(_Block(text))

    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            if list_lines:  # "- # heading" is legal CommonMark; close the list text first
                items.append(_Block("\n".join(list_lines)))
                list_lines = []
            in_heading = True
        elif kind == "heading_close":
            in_heading = False
        elif kind == "inline":
            if in_heading:
                items.append(_Heading(_markdown_inline(token)))
            else:
                add(_markdown_inline(token))
        elif kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
            if list_depth == 0 and list_lines:
                items.append(_Block("\n".join(list_lines)))
                list_lines = []
        elif kind == "list_item_open":
            item_prefix = f"{token.info}{token.markup} " if token.info else "• "
        elif kind in ("fence", "code_block"):
            add(token.content.rstrip("\n"))
        elif kind == "html_block":
            add(_html_fragment_text(token.content))
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            cells = [cell for cell in (row or []) if cell]
            if cells:
                table_rows.append(" | ".join(cells))
            row = None
        elif kind == "table_close":
            if table_rows:
                add("\n".join(table_rows))
            table_rows = []
    if list_lines:
        items.append(_Block("\n".join(list_lines)))
    return items


def _has_markdown_headings(tokens: list[Token]) -> bool:
    return any(token.type == "heading_open" for token in tokens)


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

# Page furniture and code: never part of what an owner wants the agent to know.
_HTML_DROP = ("script", "style", "nav", "footer", "noscript", "template", "head", "svg", "iframe", "object")
_HTML_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HTML_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "dd", "details", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "form", "header", "hr", "html", "li", "main", "ol",
        "p", "pre", "section", "summary", "table", "ul",
    }
)  # fmt: skip


def _html_soup(text: str) -> BeautifulSoup:
    soup = BeautifulSoup(text, "html.parser")
    for tag in soup.find_all(_HTML_DROP):
        tag.decompose()
    return soup


def _html_items(text: str) -> list[_Item]:
    """Walk the tree in document order (iteratively: deep nesting must not hit the recursion
    limit), emitting headings and the text between them.  Whitespace inside HTML text is not
    significant except in <pre>, so it is collapsed as a browser would."""
    soup = _html_soup(text)
    items: list[_Item] = []
    buffer: list[str] = []

    def flush() -> None:
        if buffer:
            items.append(_Block("".join(buffer)))
            buffer.clear()

    pre_depth = 0
    stack: list[tuple[PageElement, bool]] = [(soup, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            assert isinstance(node, Tag)
            if node.name == "pre":
                pre_depth -= 1
            if node.name in _HTML_BLOCKS:
                buffer.append("\n\n")
            continue
        if isinstance(node, NavigableString):
            if isinstance(node, PreformattedString):  # comments, doctype, CDATA, PIs
                continue
            buffer.append(str(node) if pre_depth else re.sub(r"\s+", " ", str(node)))
            continue
        if not isinstance(node, Tag):
            continue
        name = node.name
        if name in _HTML_HEADINGS:
            flush()
            items.append(_Heading(node.get_text(" ")))
            continue
        if name == "br":
            buffer.append("\n")
            continue
        if name == "tr":
            cells = [" ".join(cell.get_text(" ").split()) for cell in node.find_all(["td", "th"], recursive=False)]
            # One line per row; rows of one table stay together as one block.
            if buffer and not buffer[-1].endswith("\n"):
                buffer.append("\n")
            buffer.append(" | ".join(c for c in cells if c) + "\n")
            continue
        if name == "pre":
            pre_depth += 1
        if name in _HTML_BLOCKS:
            buffer.append("\n\n")
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.contents))
    flush()
    return items


def _html_fragment_text(fragment: str) -> str:
    """Text of raw HTML embedded in Markdown."""
    return "\n\n".join(item.text for item in _html_items(fragment))


# --------------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------------

_HEADING_END = re.compile(r"[.,;:!?。，；：！？、…]$")


def _pdf_page_heading(first_line: str) -> str | None:
    """The first line of a page when it reads like a heading: short, no sentence punctuation,
    more than a page number."""
    line = first_line.strip()
    if not (3 <= len(line) <= 60) or len(line.split()) > 8 or _HEADING_END.search(line):
        return None
    if not any(ch.isalpha() for ch in line):
        return None
    return line


def _pdf_errors(title: str) -> tuple[ExtractError, ExtractError]:
    encrypted = ExtractError(
        "pdf_encrypted",
        f"{title} is password-protected or encrypted. Upload an unprotected copy (for example "
        "print it to a new PDF without a password).",
    )
    corrupt = ExtractError(
        "corrupt_file",
        f"{title} could not be read as a PDF; it may be damaged or incomplete. Export it again and re-upload it.",
    )
    return encrypted, corrupt


def _open_pdf(title: str, data: bytes, limits: Limits) -> PdfReader:
    """The PDF's reader once its structure is known to be readable, unencrypted and within the
    section limit (every page can become a section); no page's text is extracted here."""
    encrypted, corrupt = _pdf_errors(title)
    try:
        reader = PdfReader(io.BytesIO(data))
        # pypdf silently decrypts files whose user password is empty, so a successful open says
        # nothing; the /Encrypt entry in the trailer does.  We never decrypt, on purpose.
        if reader.is_encrypted:
            raise encrypted
        page_count = len(reader.pages)
    except (ExtractError, MemoryError):
        raise
    except (DependencyError, FileNotDecryptedError, WrongPasswordError) as exc:
        raise encrypted from exc
    except Exception as exc:  # pypdf raises many types (and plain ValueError/KeyError) on bad input
        raise corrupt from exc
    if page_count == 0:
        raise corrupt
    _check_section_count(title, page_count, limits, "pages")
    return reader


def _extract_pdf(title: str, data: bytes, limits: Limits = NO_LIMITS) -> tuple[list[Section], bool]:
    reader = _open_pdf(title, data, limits)
    encrypted, corrupt = _pdf_errors(title)
    try:
        texts = [page.extract_text() or "" for page in reader.pages]
    except MemoryError:
        raise
    except (DependencyError, FileNotDecryptedError, WrongPasswordError) as exc:
        raise encrypted from exc
    except LimitReachedError as exc:
        # pypdf stops inflating a stream at 75 MB: the same trick as a zip bomb, inside a PDF.
        raise ExtractError(
            "archive_too_large",
            f"{title} contains compressed content that expands to far more data than a document "
            "should, so it was not read. Export the PDF again or upload a text version.",
        ) from exc
    except Exception as exc:  # pypdf raises many types (and plain ValueError/KeyError) on bad input
        raise corrupt from exc

    pages = [_normalize(text) for text in texts]
    first_lines = [page.split("\n", 1)[0] for page in pages]
    # A first line repeated on several pages is a running header, not a page heading.
    repeated = {line for line, count in Counter(first_lines).items() if count > 1}

    sections: list[Section] = []
    doubtful = False
    for number, body in enumerate(pages, start=1):
        visible = sum(1 for ch in body if not ch.isspace())
        if visible < _MIN_PAGE_CHARS:
            doubtful = True  # a page that exists but yields (almost) no text: scan, image, or font trouble
            continue
        if body.count("\ufffd") * 10 > visible:
            doubtful = True  # many replacement characters: the font's text mapping is broken
        heading = None
        if "\n" in body and first_lines[number - 1] not in repeated:
            heading = _pdf_page_heading(first_lines[number - 1])
        sections.append(
            Section(
                title=_one_line(heading) if heading else f"{title} — page {number}", body=body, anchor=f"page-{number}"
            )
        )
    if not sections:
        raise ExtractError(
            "no_content",
            f"No text could be read from {title}; it may be a scanned image. Upload a PDF with "
            "selectable text (run OCR first) or a text version.",
        )
    return sections, doubtful


# --------------------------------------------------------------------------------------------
# DOCX
# --------------------------------------------------------------------------------------------


def _check_docx_archive(title: str, data: bytes) -> None:
    """Refuse zip bombs and non-Word zips from the central directory alone.

    The sizes checked are the ones the archive declares; zipfile never inflates an entry past its
    declared size, so a lying archive cannot expand beyond what we checked here."""
    corrupt = ExtractError(
        "corrupt_file",
        f"{title} is not a valid Word (.docx) document. Save it again from Word as .docx and re-upload it.",
    )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise corrupt from exc

    too_large = ExtractError(
        "archive_too_large",
        f"{title} expands to far more data than a Word document should, so it was not opened. "
        "Remove embedded media or split the document, and re-upload it.",
    )
    if sum(info.file_size for info in infos) > MAX_DOCX_UNCOMPRESSED:
        raise too_large
    for info in infos:
        if info.file_size > _BOMB_MIN_SIZE and info.file_size > _BOMB_RATIO * max(info.compress_size, 1):
            raise too_large
    if "word/document.xml" not in {info.filename for info in infos}:
        raise corrupt


def _docx_cell_text(cell: _Cell) -> str:
    parts: list[str] = []
    for content in cell.iter_inner_content():
        if isinstance(content, Table):  # a nested table
            parts.extend(_docx_table_rows(content))
        else:
            parts.append(content.text)
    return " ".join(" ".join(parts).split())


def _docx_table_rows(table: Table) -> list[str]:
    rows: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        seen: list[object] = []
        for cell in row.cells:
            # Merged cells are returned once per grid column; identity of the XML element tells.
            if any(cell._tc is tc for tc in seen):
                continue
            seen.append(cell._tc)
            text = _docx_cell_text(cell)
            if text:
                cells.append(text)
        if cells:
            rows.append(" | ".join(cells))
    return rows


def _docx_is_heading(paragraph: Paragraph) -> bool:
    style = paragraph.style
    name = (style.name or "") if style is not None else ""
    return name.startswith(("Heading", "Title"))


def _extract_docx(title: str, data: bytes, limits: Limits = NO_LIMITS) -> list[Section]:
    _check_docx_archive(title, data)  # before python-docx inflates anything
    try:
        document = docx.Document(io.BytesIO(data))
        items: list[_Item] = []
        for content in document.iter_inner_content():
            if isinstance(content, Table):
                rows = _docx_table_rows(content)
                if rows:
                    items.append(_Block("\n".join(rows)))
            elif _docx_is_heading(content):
                items.append(_Heading(content.text))
            else:
                items.append(_Block(content.text))
    except Exception as exc:  # python-docx/lxml raise KeyError, ValueError, XMLSyntaxError …
        raise ExtractError(
            "corrupt_file",
            f"{title} could not be read as a Word document; it may be damaged. Save it again from Word "
            "as .docx and re-upload it.",
        ) from exc
    return _split_on_headings(title, items, limits)


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def _no_content(title: str) -> ExtractError:
    return ExtractError("no_content", f"{title} contains no text to learn from. Upload a document with text in it.")


def _check_size(title: str, size: int, max_bytes: int, limits: Limits = NO_LIMITS) -> None:
    if size > max_bytes:
        raise ExtractError(
            "too_large", f"{title} is {_megabytes(size)}; the limit is {_megabytes(max_bytes)}. {limits.advice}"
        )


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


def _text_sections(title: str, media_type: str, text: str, limits: Limits) -> list[Section]:
    if media_type == HTML:
        return _split_on_headings(title, _html_items(text), limits)
    if media_type == MARKDOWN:
        return _split_on_headings(title, _markdown_items(_markdown_tokens(text)), limits)
    return split_plain(title, text)


def precheck(
    filename: str,
    data: bytes,
    *,
    declared_type: str | None = None,
    max_bytes: int = MAX_BYTES,
    limits: Limits = NO_LIMITS,
) -> str:
    """The media type of an upload, after the checks that are cheap whatever the file holds: its
    size, its type, text that is UTF-8 and not blank, a PDF's structure and page count, a Word
    archive's directory.  Nothing is parsed into sections, so a request can afford this and
    leave :func:`extract` (bounded in time and memory) to a worker."""
    title = _doc_title(filename)
    _check_size(title, len(data), max_bytes, limits)
    if not data:
        raise _no_content(title)
    media_type, text = _detect(filename, data, declared_type)
    if media_type == PDF:
        _open_pdf(title, data, limits)
    elif media_type == DOCX:
        _check_docx_archive(title, data)
    elif text is not None and not text.strip():
        raise _no_content(title)
    return media_type


def extract(
    filename: str,
    data: bytes,
    *,
    declared_type: str | None = None,
    max_bytes: int = MAX_BYTES,
    limits: Limits = NO_LIMITS,
) -> Extracted:
    """Sections of an uploaded document, or :class:`ExtractError`."""
    title = _doc_title(filename)
    _check_size(title, len(data), max_bytes, limits)  # first: nothing else is done with an oversized upload
    if not data:
        raise _no_content(title)

    media_type, text = _detect(filename, data, declared_type)
    doubtful = False
    if media_type == PDF:
        sections, doubtful = _extract_pdf(title, data, limits)
    elif media_type == DOCX:
        sections = _extract_docx(title, data, limits)
    else:
        assert text is not None
        sections = _text_sections(title, media_type, text, limits)
    if not sections:
        raise _no_content(title)
    _check_limits(title, sections, limits)
    return Extracted(
        sha256=hashlib.sha256(data).hexdigest(), media_type=media_type, sections=sections, doubtful=doubtful
    )


def extract_text(title: str, text: str, *, max_bytes: int = MAX_BYTES, limits: Limits = NO_LIMITS) -> Extracted:
    """Sections of a JSON ``{"title", "text"}`` ingest: Markdown when it has headings, else plain."""
    raw = text.encode("utf-8")
    name = _one_line(title) or "document"
    _check_size(name, len(raw), max_bytes, limits)
    tokens = _markdown_tokens(text)
    if _has_markdown_headings(tokens):
        media_type, sections = MARKDOWN, _split_on_headings(name, _markdown_items(tokens), limits)
    else:
        media_type, sections = PLAIN, split_plain(name, text)
    if not sections:
        raise _no_content(name)
    _check_limits(name, sections, limits)
    return Extracted(sha256=hashlib.sha256(raw).hexdigest(), media_type=media_type, sections=sections, doubtful=False)
