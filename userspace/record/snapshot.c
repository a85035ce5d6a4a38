// SPDX-License-Identifier: GPL-2.0
/* The per-interval snapshot's memory: see snapshot.h. */
#include "userspace/record/snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int snap_init(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	if (ps_htab_init(&s->cache_by_cls, sizeof(uint64_t)) ||
	    ps_htab_init(&s->frames_by_id, sizeof(int32_t))) {
		snap_free(s);
		return -ENOMEM;
	}
	return 0;
}

void snap_reset(struct snap *s)
{
	s->ntags = s->nclasses = s->ncaches = s->nstk = s->nframes = s->nprogs = 0;
	ps_htab_clear(&s->cache_by_cls);
	ps_htab_clear(&s->frames_by_id);
	memset(s->ctr_ok, 0, sizeof(s->ctr_ok));
	s->cpu_ok = s->wl_ok = false;
	s->meminfo.n = s->slabinfo.n = 0;
	s->nnew_tags = s->nsamples = s->ncls_ctr = 0;
	s->implicit_frees = s->preexisting_frees = 0;
	s->has_w = false;
}

void snap_free(struct snap *s)
{
	free(s->tags);
	free(s->classes);
	free(s->caches);
	ps_htab_fini(&s->cache_by_cls);
	free(s->stk);
	free(s->frames);
	ps_htab_fini(&s->frames_by_id);
	free(s->progs);
	ps_meminfo_free(&s->meminfo);
	ps_slabinfo_free(&s->slabinfo);
	free(s->new_tags);
	free(s->samples);
	free(s->cls_ctr);
	memset(s, 0, sizeof(*s));
}
