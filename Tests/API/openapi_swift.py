#!/usr/bin/env python3
"""Writes Sources/NewsstandServer/API/OpenAPIDocument.swift from openapi.json beside it (`make openapi`):
the committed document is the source; the Swift file carries its bytes into the binary."""
from pathlib import Path

api = Path(__file__).resolve().parents[2] / "Sources/NewsstandServer/API"
text = (api / "openapi.json").read_text()
assert '"""#' not in text
(api / "OpenAPIDocument.swift").write_text(
    "/// The API's OpenAPI 3.1 document, served at `/api/openapi.json`. Its source is `openapi.json` beside this\n"
    "/// file (the committed document, which schemathesis reads); `make openapi` writes this file from it, and\n"
    "/// `OpenAPITests` holds the two equal byte for byte.\n"
    "enum OpenAPIDocument {\n"
    '    static let json = #"""\n' + text.rstrip("\n") + '\n"""#\n}\n')
