/*
 * test_svg_xml.h — XML checks for the SVG tests: well-formedness and XPath
 * counts through xmllint (libxml2's parser; package libxml2-utils).
 */
#ifndef TEST_SVG_XML_H
#define TEST_SVG_XML_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0 when xmllint parses the file without complaint. */
static inline int xml_wellformed(const char *path)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "xmllint --noout --nonet '%s' 2>&1", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char buf[512];
	int complaints = 0;
	while (fgets(buf, sizeof buf, p)) {
		fprintf(stderr, "xmllint: %s", buf);
		complaints++;
	}
	int st = pclose(p);
	return st != 0 || complaints ? 1 : 0;
}

/* Value of an XPath number expression, e.g. a count() of elements. */
static inline double xml_xpath_num(const char *path, const char *expr)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "xmllint --nonet --xpath \"%s\" '%s' 2>/dev/null", expr, path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char buf[128] = "";
	if (!fgets(buf, sizeof buf, p))
		buf[0] = '\0';
	pclose(p);
	return buf[0] ? atof(buf) : -1;
}

static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return s;
}

static inline void spit(const char *path, const char *s, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(s, 1, len, f);
		fclose(f);
	}
}

#endif
