/* error.c — formatting of pb_error messages (see error.h). */
#include "util/error.h"

#include <stdio.h>
#include <string.h>

int pb_verr(pb_error *err, int code, const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	}
	return code;
}

int pb_err(pb_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pb_verr(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int pb_err_prefix(pb_error *err, const char *fmt, ...)
{
	if (!err)
		return PB_EINTERNAL;
	char prefix[512], old[sizeof err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	snprintf(err->msg, sizeof err->msg, "%.500s: %.500s", prefix, old);
	return err->code;
}

void pb_err_clear(pb_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

int pb_exit_code(int status)
{
	if (status == PB_OK)
		return 0;
	if (status == PB_EUSAGE)
		return 1;
	return 2;
}
