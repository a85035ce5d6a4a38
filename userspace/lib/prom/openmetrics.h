/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A metrics page in the two text formats Prometheus scrapes: OpenMetrics 1.0
 * (application/openmetrics-text) and the older Prometheus text format 0.0.4 (text/plain). They
 * differ in three places, all handled here: a counter's family is named without "_total" in
 * OpenMetrics and with it in 0.0.4; "# UNIT" lines and the closing "# EOF" exist only in
 * OpenMetrics. Pure: builds a string in memory, no I/O.
 */
#ifndef PS_PROM_OPENMETRICS_H
#define PS_PROM_OPENMETRICS_H

#include <stdbool.h>
#include <stddef.h>

struct ps_om {
	char *buf;
	size_t len, cap;
	bool openmetrics;	/* else the 0.0.4 text format */
	bool counter;		/* the current family is a counter: samples get "_total" */
	char family[96];
	int err;		/* first error (-ENOMEM, -EINVAL), sticky */
};

void ps_om_init(struct ps_om *m, bool openmetrics);
void ps_om_free(struct ps_om *m);
/*
 * Starts a metric family: name without "_total", type "gauge" or "counter", unit (NULL: none;
 * the name must then end in "_<unit>"), help text (escaped here).
 */
void ps_om_family(struct ps_om *m, const char *name, const char *type, const char *unit,
		  const char *help);
/*
 * One sample of the current family. labels: name, value, name, value, ..., NULL (NULL for
 * none); values are escaped. A NULL value leaves its label out.
 */
void ps_om_sample(struct ps_om *m, const char *const *labels, double v);
/* Ends the page ("# EOF" in OpenMetrics). Returns the first error, 0. */
int ps_om_finish(struct ps_om *m);

/* Whether s is a valid metric or label name ([a-zA-Z_:][a-zA-Z0-9_:]*; no ':' for labels). */
bool ps_om_valid_name(const char *s, bool label);

#endif
