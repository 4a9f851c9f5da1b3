/*
 * xml_text.h — text into SVG/XML and Graphviz strings: invalid UTF-8
 * replaced, special characters escaped.
 */
#ifndef PB_RENDER_XML_TEXT_H
#define PB_RENDER_XML_TEXT_H

#include <stdio.h>

/* Replacement text for one ASCII byte, or NULL to write it as it is. */
typedef const char *(*pb_char_escape)(unsigned char c);
/* Writes s (NULL: nothing) character by character: a byte that does not
 * start a valid UTF-8 sequence as '?', an ASCII byte as esc() says, other
 * characters as they are. */
void pb_text_escape(FILE *f, const char *s, pb_char_escape esc);
/* Writes s with & < > " ' escaped for XML text and attributes; invalid UTF-8
 * bytes become '?' and control characters other than \n and \t a space, so
 * any model name gives well-formed XML. */
void pb_xml_escape(FILE *f, const char *s);

#endif
