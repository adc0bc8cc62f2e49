/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_min.c: Hopcroft's minimisation over a refinable partition.
 *
 * States sit in elems[] grouped by block; block b is elems[first[b], end[b])
 * and its marked states are elems[first[b], mid[b]). A splitter A is a
 * block taken from the queue: its members' predecessors are gathered once,
 * by class, and for each class c the states whose c-successor lies in A are
 * marked, then each touched block is cut into marked and unmarked parts.
 * The smaller part becomes the new block and is queued: if the block was
 * queued, its larger part (which keeps its number) still is; if not, the
 * smaller part suffices (Hopcroft's "process the smaller half"). A splitter
 * costs its members and their transitions, not its members times the
 * classes: O(m log n) for m transitions.
 *
 * The sink that most transitions of a path automaton enter (the dead
 * state), and every state that can reach nothing but its label, form one
 * block from the start: they are equivalent, so that block never splits,
 * it is the one block the queue may leave out, and the transitions into
 * the sink are not even listed.
 */
#include "dfa_impl.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

struct dfa_min {
	uint32_t n, k;
	uint32_t *elems, *loc, *blk;
	uint32_t *first, *mid, *end;
	uint32_t nblocks;
	uint32_t *touched;
	size_t ntouched;
	uint32_t *work;          /* blocks to split by, a stack */
	size_t nwork, workcap;
};

static void dfa_min_queue(struct dfa_min *m, uint32_t b)
{
	*VEC_PUSH(m->work, m->nwork, m->workcap) = b;
}

static void dfa_min_mark(struct dfa_min *m, uint32_t s)
{
	uint32_t b = m->blk[s], at = m->loc[s], to = m->mid[b];
	if (at < to)
		return;
	uint32_t other = m->elems[to];
	m->elems[to] = s;
	m->loc[s] = to;
	m->elems[at] = other;
	m->loc[other] = at;
	if (m->mid[b]++ == m->first[b])
		m->touched[m->ntouched++] = b;
}

static void dfa_min_split(struct dfa_min *m, uint32_t b)
{
	uint32_t marked = m->mid[b] - m->first[b], size = m->end[b] - m->first[b];
	if (marked == size) {
		m->mid[b] = m->first[b];
		return;
	}
	uint32_t nb = m->nblocks++;
	if (marked <= size - marked) {
		m->first[nb] = m->first[b];
		m->end[nb] = m->mid[b];
		m->first[b] = m->mid[b];
	} else {
		m->first[nb] = m->mid[b];
		m->end[nb] = m->end[b];
		m->end[b] = m->mid[b];
	}
	m->mid[b] = m->first[b];
	m->mid[nb] = m->first[nb];
	for (uint32_t i = m->first[nb]; i < m->end[nb]; i++)
		m->blk[m->elems[i]] = nb;
	dfa_min_queue(m, nb);
}

static int dfa_min_cmp_label(const void *a, const void *b, void *arg)
{
	const uint32_t *label = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t lx = label[x], ly = label[y];
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A sink of trans (every class leads back to it), one with label 0 if there
 * is one; UINT32_MAX when none. */
static uint32_t dfa_min_sink(uint32_t n, uint32_t k, const uint32_t *trans, const uint32_t *label)
{
	uint32_t found = UINT32_MAX;
	for (uint32_t s = 0; s < n; s++) {
		bool closed = true;
		for (uint32_t c = 0; c < k && closed; c++)
			closed = trans[(size_t)s * k + c] == s;
		if (closed && (found == UINT32_MAX || (label[s] == 0 && label[found] != 0)))
			found = s;
	}
	return found;
}

uint32_t dfa_min_partition(uint32_t n, uint32_t k, const uint32_t *trans, const uint32_t *label,
			   uint32_t *block)
{
	struct dfa_min m = { .n = n, .k = k };
	m.elems = xmalloc((n ? n : 1) * sizeof(uint32_t));
	m.loc = xmalloc((n ? n : 1) * sizeof(uint32_t));
	m.blk = block;
	m.first = xmalloc((n ? n : 1) * sizeof(uint32_t));
	m.mid = xmalloc((n ? n : 1) * sizeof(uint32_t));
	m.end = xmalloc((n ? n : 1) * sizeof(uint32_t));
	m.touched = xmalloc((n ? n : 1) * sizeof(uint32_t));
	uint32_t z = dfa_min_sink(n, k, trans, label);

	/* predecessors by target, as CSR of (state, class), without the
	 * transitions into z */
	uint32_t *pred_off = xcalloc((size_t)n + 1, sizeof(uint32_t));
	size_t npred = 0;
	for (size_t i = 0; i < (size_t)n * k; i++)
		if (trans[i] != z) {
			pred_off[trans[i] + 1]++;
			npred++;
		}
	for (uint32_t t = 0; t < n; t++)
		pred_off[t + 1] += pred_off[t];
	uint32_t *pred = xmalloc((npred ? npred : 1) * sizeof(uint32_t));
	uint32_t *pcls = xmalloc((npred ? npred : 1) * sizeof(uint32_t));
	uint32_t *fill = xmalloc((n ? n : 1) * sizeof(uint32_t));
	memcpy(fill, pred_off, n * sizeof(uint32_t));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t c = 0; c < k; c++) {
			uint32_t t = trans[(size_t)s * k + c];
			if (t != z) {
				pred[fill[t]] = s;
				pcls[fill[t]++] = c;
			}
		}
	free(fill);

	/* the states from which a label other than z's is reachable (backward
	 * over the lists above); the others join z under the key UINT32_MAX */
	uint32_t *key = xmalloc((n ? n : 1) * sizeof(uint32_t));
	memcpy(key, label, n * sizeof(uint32_t));
	if (z != UINT32_MAX) {
		bool *live = xcalloc(n, sizeof(bool));
		uint32_t *queue = m.touched;   /* free until the refinement */
		size_t nq = 0;
		for (uint32_t s = 0; s < n; s++)
			if (label[s] != label[z]) {
				live[s] = true;
				queue[nq++] = s;
			}
		for (size_t h = 0; h < nq; h++)
			for (uint32_t p = pred_off[queue[h]]; p < pred_off[queue[h] + 1]; p++)
				if (!live[pred[p]]) {
					live[pred[p]] = true;
					queue[nq++] = pred[p];
				}
		for (uint32_t s = 0; s < n; s++)
			if (!live[s])
				key[s] = UINT32_MAX;
		free(live);
	}

	/* initial partition: one block per key */
	for (uint32_t s = 0; s < n; s++)
		m.elems[s] = s;
	qsort_r(m.elems, n, sizeof(uint32_t), dfa_min_cmp_label, key);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = m.elems[i];
		if (i == 0 || key[s] != key[m.elems[i - 1]]) {
			m.first[m.nblocks] = m.mid[m.nblocks] = i;
			m.nblocks++;
		}
		m.end[m.nblocks - 1] = i + 1;
		m.blk[s] = m.nblocks - 1;
		m.loc[s] = i;
	}
	free(key);
	/* every block but one: the last one's splits follow from the others;
	 * z's if there is one (it never splits), else the largest */
	uint32_t skip = 0;
	if (z != UINT32_MAX)
		skip = m.blk[z];
	else
		for (uint32_t b = 0; b < m.nblocks; b++)
			if (m.end[b] - m.first[b] > m.end[skip] - m.first[skip])
				skip = b;
	for (uint32_t b = 0; b < m.nblocks; b++)
		if (b != skip)
			dfa_min_queue(&m, b);

	/* a splitter's predecessors, gathered and then grouped by class */
	uint32_t *gs = xmalloc((npred ? npred : 1) * sizeof(uint32_t));
	uint32_t *gc = xmalloc((npred ? npred : 1) * sizeof(uint32_t));
	uint32_t *by = xmalloc((npred ? npred : 1) * sizeof(uint32_t));
	uint32_t *cnt = xmalloc(((size_t)k + 1) * sizeof(uint32_t));
	while (m.nwork) {
		uint32_t a = m.work[--m.nwork];
		/* gather first: marking reorders elems, block a's included */
		size_t ng = 0;
		for (uint32_t i = m.first[a]; i < m.end[a]; i++) {
			uint32_t t = m.elems[i];
			for (uint32_t p = pred_off[t]; p < pred_off[t + 1]; p++) {
				gs[ng] = pred[p];
				gc[ng++] = pcls[p];
			}
		}
		if (ng == 0)
			continue;
		memset(cnt, 0, ((size_t)k + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < ng; i++)
			cnt[gc[i] + 1]++;
		for (uint32_t c = 0; c < k; c++)
			cnt[c + 1] += cnt[c];
		for (size_t i = 0; i < ng; i++)
			by[cnt[gc[i]]++] = gs[i];
		/* cnt[c] is now where class c + 1 starts */
		for (uint32_t c = 0, at = 0; c < k; at = cnt[c++]) {
			if (at == cnt[c])
				continue;
			for (uint32_t i = at; i < cnt[c]; i++)
				dfa_min_mark(&m, by[i]);
			for (size_t i = 0; i < m.ntouched; i++)
				dfa_min_split(&m, m.touched[i]);
			m.ntouched = 0;
		}
	}

	uint32_t nb = m.nblocks;
	free(gs);
	free(gc);
	free(by);
	free(cnt);
	free(pred);
	free(pcls);
	free(pred_off);
	free(m.elems);
	free(m.loc);
	free(m.first);
	free(m.mid);
	free(m.end);
	free(m.touched);
	free(m.work);
	return nb;
}

/* Byte classes that no state tells apart become one (see dfa_impl.h). */
uint32_t dfa_classes_merge(const uint32_t *qtrans, uint32_t nb, uint32_t k, uint32_t *newcls,
			   uint32_t *rep)
{
	uint64_t *hash = xmalloc(k * sizeof(uint64_t));
	uint32_t *col = xmalloc((nb ? nb : 1) * sizeof(uint32_t));
	uint32_t k2 = 0;
	for (uint32_t c = 0; c < k; c++) {
		for (uint32_t b = 0; b < nb; b++)
			col[b] = qtrans[(size_t)b * k + c];
		hash[c] = dfa_seq_hash(col, nb);
		newcls[c] = UINT32_MAX;
		for (uint32_t d = 0; d < c && newcls[c] == UINT32_MAX; d++) {
			if (hash[d] != hash[c] || rep[newcls[d]] != d)
				continue;
			bool same = true;
			for (uint32_t b = 0; b < nb && same; b++)
				same = qtrans[(size_t)b * k + c] == qtrans[(size_t)b * k + d];
			if (same)
				newcls[c] = newcls[d];
		}
		if (newcls[c] == UINT32_MAX) {
			rep[k2] = c;
			newcls[c] = k2++;
		}
	}
	free(hash);
	free(col);
	return k2;
}
