/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_min.c: Hopcroft's minimisation over a refinable partition.
 *
 * States sit in elems[] grouped by block; block b is elems[first[b], end[b])
 * and its marked states are elems[first[b], mid[b]). A splitter (A, c)
 * marks every state whose c-successor lies in A, then each touched block is
 * cut into marked and unmarked parts. The smaller part becomes the new block
 * and is queued with every class: if (Y, c) was queued, Y (now the larger
 * part) still is; if not, the smaller part suffices (Hopcroft's
 * "process the smaller half"). This gives O(k n log n).
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
	uint64_t *work;          /* (block << 32 | class) pairs, a stack */
	size_t nwork, workcap;
};

static void dfa_min_queue(struct dfa_min *m, uint32_t b, uint32_t c)
{
	*VEC_PUSH(m->work, m->nwork, m->workcap) = (uint64_t)b << 32 | c;
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
	for (uint32_t c = 0; c < m->k; c++)
		dfa_min_queue(m, nb, c);
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

uint32_t dfa_min_partition(uint32_t n, uint32_t k, const uint32_t *trans, const uint32_t *label,
			   uint32_t *block)
{
	struct dfa_min m = { .n = n, .k = k };
	m.elems = xmalloc(n * sizeof(uint32_t));
	m.loc = xmalloc(n * sizeof(uint32_t));
	m.blk = block;
	m.first = xmalloc(n * sizeof(uint32_t));
	m.mid = xmalloc(n * sizeof(uint32_t));
	m.end = xmalloc(n * sizeof(uint32_t));
	m.touched = xmalloc(n * sizeof(uint32_t));

	/* initial partition: one block per label */
	for (uint32_t s = 0; s < n; s++)
		m.elems[s] = s;
	qsort_r(m.elems, n, sizeof(uint32_t), dfa_min_cmp_label, (void *)label);
	uint32_t largest = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = m.elems[i];
		if (i == 0 || label[s] != label[m.elems[i - 1]]) {
			m.first[m.nblocks] = m.mid[m.nblocks] = i;
			m.nblocks++;
		}
		m.end[m.nblocks - 1] = i + 1;
		m.blk[s] = m.nblocks - 1;
		m.loc[s] = i;
	}
	for (uint32_t b = 0; b < m.nblocks; b++)
		if (m.end[b] - m.first[b] > m.end[largest] - m.first[largest])
			largest = b;
	/* every block but one: the last one's splits follow from the others */
	for (uint32_t b = 0; b < m.nblocks; b++)
		if (b != largest)
			for (uint32_t c = 0; c < k; c++)
				dfa_min_queue(&m, b, c);

	/* predecessors by (class, target), as CSR */
	size_t kn = (size_t)k * n;
	uint32_t *pred_off = xcalloc(kn + 1, sizeof(uint32_t));
	uint32_t *pred = xmalloc((kn ? kn : 1) * sizeof(uint32_t));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t c = 0; c < k; c++)
			pred_off[(size_t)c * n + trans[(size_t)s * k + c] + 1]++;
	for (size_t i = 0; i < kn; i++)
		pred_off[i + 1] += pred_off[i];
	uint32_t *fill = xmalloc((kn ? kn : 1) * sizeof(uint32_t));
	memcpy(fill, pred_off, kn * sizeof(uint32_t));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t c = 0; c < k; c++)
			pred[fill[(size_t)c * n + trans[(size_t)s * k + c]]++] = s;
	free(fill);

	uint32_t *scratch = xmalloc(n * sizeof(uint32_t));
	while (m.nwork) {
		uint64_t w = m.work[--m.nwork];
		uint32_t a = (uint32_t)(w >> 32), c = (uint32_t)w;
		/* gather first: marking reorders elems, block a's included */
		size_t ns = 0;
		for (uint32_t i = m.first[a]; i < m.end[a]; i++) {
			size_t key = (size_t)c * n + m.elems[i];
			for (uint32_t p = pred_off[key]; p < pred_off[key + 1]; p++)
				scratch[ns++] = pred[p];
		}
		for (size_t i = 0; i < ns; i++)
			dfa_min_mark(&m, scratch[i]);
		for (size_t i = 0; i < m.ntouched; i++)
			dfa_min_split(&m, m.touched[i]);
		m.ntouched = 0;
	}

	uint32_t nb = m.nblocks;
	free(scratch);
	free(pred);
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
