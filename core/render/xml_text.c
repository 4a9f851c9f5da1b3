/*
 * xml_text.c — text into the SVG writers (see xml_text.h): one walk over
 * the UTF-8 characters of a string that replaces invalid bytes and lets a
 * per-format table substitute single bytes (XML entities here, Graphviz
 * escapes in svg_export.c). Invariant: whatever bytes a model name holds,
 * pb_xml_escape writes well-formed XML 1.0 text (escaped markup, no invalid
 * UTF-8, no control characters other than \n and \t).
 */
#include "render/xml_text.h"

/* Length (1-4) of the valid UTF-8 sequence at p, 0 if the bytes there are
 * not one (p points at a non-NUL byte). */
static int utf8_len(const unsigned char *p)
{
	int n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
	for (int k = 1; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

void pb_text_escape(FILE *f, const char *s, pb_char_escape esc)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		int n = utf8_len(p);
		const char *e = n == 0 ? "?" : n == 1 ? esc(*p) : NULL;
		if (e)
			fputs(e, f);
		else
			fwrite(p, 1, (size_t)n, f);
		p += n ? n : 1;
	}
}

static const char *xml_char(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	}
	/* Control characters are not allowed in XML 1.0. */
	return c < 0x20 && c != '\n' && c != '\t' ? " " : NULL;
}

void pb_xml_escape(FILE *f, const char *s)
{
	pb_text_escape(f, s, xml_char);
}
