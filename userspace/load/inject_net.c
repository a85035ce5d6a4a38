// SPDX-License-Identifier: GPL-2.0
/*
 * --inject net-stall: every N workload IOs, a new TCP connection to the server's SMB port that
 * speaks just enough SMB2 to be kept, sends ECHO requests back to back and never reads their
 * answers. ECHO needs no session: smbd answers each one, and the answers fill this socket's
 * receive queue and then the server socket's send queue, where they stay until load exits.
 *
 * The handshake, whose answers are read: NEGOTIATE; an anonymous session (NTLMSSP with no user)
 * and a tree connect to IPC$, because smbd closes a connection that has no tree connect a
 * minute after it began; then one ECHO. Each connection has a client GUID of its own: smbd hands a connection whose
 * GUID it already serves to that connection's process.
 *
 * Credits: smbd checks every message id against the credits it has granted, and it may read and
 * check a request before it has answered the one before (smbd 4.17 negotiates asynchronously),
 * hence the answers read up to the first ECHO, which asks for many credits. From then on each
 * request charges one credit and asks for more, so smbd's window only grows and the next id is
 * always in it without a grant read.
 *
 * How many: ECHOES a connection, as many answers as the server's send queue and this receive
 * queue take, not more. Past that smbd would queue answers in its own memory and stop reading,
 * and smbd 4.17 keeps the process of a connection reset while answers wait in its own queue:
 * its processes would outlive the run. For the same reason the connections are not just dropped
 * at the end but read empty first (drain()).
 */
#include "userspace/load/load.h"
#include "userspace/lib/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SMB2_HDR	64
#define NBT_HDR		4
#define OP_NEGOTIATE	0x0000
#define OP_SESSION_SETUP 0x0001
#define OP_TREE_CONNECT	0x0003
#define OP_ECHO		0x000d
#define MORE_PROCESSING	0xc0000016u	/* STATUS_MORE_PROCESSING_REQUIRED */
#define ECHO_LEN	(NBT_HDR + SMB2_HDR + 4)	/* an ECHO and its answer alike */
#define NEG_NDIALECTS	4
#define NEG_LEN		(NBT_HDR + SMB2_HDR + 36 + 2 * NEG_NDIALECTS)
#define REQ_MAX		1024		/* the longest request of the handshake */
#define CREDITS_ASKED	8		/* by each request but the first ECHO */
#define CREDITS_FIRST	256		/* by the first ECHO, whose answer is read */
#define BATCH		512		/* ECHO requests per write */
#define ECHOES		16000		/* per connection (1.1 MiB of answers), see above */
#define STREAM_LEN	((uint64_t)ECHOES * ECHO_LEN)
#define DRAIN_NS	10000000000ull
#define MAX_CONNS	256		/* a few hundred MiB: far from the machine's TCP limits */
#define CLIENT_SNDBUF	32768		/* the kernel doubles it */

/*
 * NTLMSSP for an anonymous session (MS-NLMP): NEGOTIATE with the anonymous flag, then
 * AUTHENTICATE with no user, no domain, no NT response and a one-byte LM response. Flags:
 * UNICODE, REQUEST_TARGET, NTLM, ANONYMOUS, EXTENDED_SESSIONSECURITY.
 */
#define NTLM_FLAGS	"\x05\x0a\x08\x00"
static const uint8_t ntlm_negotiate[] =
	"NTLMSSP\0" "\x01\0\0\0" NTLM_FLAGS
	"\0\0\0\0\0\0\0\0" "\0\0\0\0\0\0\0\0";
static const uint8_t ntlm_authenticate[] =
	"NTLMSSP\0" "\x03\0\0\0"
	"\x01\0\x01\0\x40\0\0\0"		/* LM response: 1 byte at 64 */
	"\0\0\0\0\x41\0\0\0" "\0\0\0\0\x41\0\0\0" "\0\0\0\0\x41\0\0\0"
	"\0\0\0\0\x41\0\0\0" "\0\0\0\0\x41\0\0\0"	/* NT, domain, user, host, key: empty */
	NTLM_FLAGS "\0";

struct stall {
	int fd;
	uint64_t mid0;			/* message id of the first streamed ECHO */
	uint64_t off;			/* bytes of the stream of ECHOs written */
	uint64_t got;			/* bytes of answers read when draining */
};

/* What a connection is set up with, learnt on the first one. */
struct stall_setup {
	const struct addrinfo *ai;
	const char *host, *where;
	unsigned timeout_ms;
	bool anonymous;			/* an anonymous session and a tree connect to IPC$ */
	uint64_t guid;			/* the next client GUID (low half) */
};

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v); put32(p + 4, v >> 32); }
static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* NetBIOS session length prefix and SMB2 header of a request; returns the body. */
static uint8_t *smb2_hdr(uint8_t *p, size_t pdu_len, uint16_t op, uint64_t mid,
			 uint16_t credits, uint64_t sid)
{
	size_t n = pdu_len - NBT_HDR;

	memset(p, 0, pdu_len);
	p[1] = n >> 16; p[2] = n >> 8; p[3] = n;
	p += NBT_HDR;
	p[0] = 0xfe; p[1] = 'S'; p[2] = 'M'; p[3] = 'B';
	put16(p + 4, SMB2_HDR);
	put16(p + 6, 1);			/* credit charge */
	put16(p + 12, op);
	put16(p + 14, credits);
	put64(p + 24, mid);
	put32(p + 32, 0xfeff);			/* process id, as Windows sends it */
	put64(p + 40, sid);
	return p + SMB2_HDR;
}

static size_t negotiate_req(uint8_t *p, uint64_t guid)
{
	static const uint16_t dialects[NEG_NDIALECTS] = { 0x0202, 0x0210, 0x0300, 0x0302 };
	uint8_t *b = smb2_hdr(p, NEG_LEN, OP_NEGOTIATE, 0, 1, 0);

	put16(b, 36);
	put16(b + 2, NEG_NDIALECTS);
	put16(b + 4, 1);			/* security mode: signing enabled */
	b[12] = 'p'; b[13] = 's';		/* client GUID: "ps", then this connection's */
	put64(b + 20, guid);
	for (int i = 0; i < NEG_NDIALECTS; i++)
		put16(b + 36 + 2 * i, dialects[i]);
	return NEG_LEN;
}

static size_t session_req(uint8_t *p, uint64_t mid, uint64_t sid, const uint8_t *blob,
			  size_t blen)
{
	size_t len = NBT_HDR + SMB2_HDR + 24 + blen;
	uint8_t *b = smb2_hdr(p, len, OP_SESSION_SETUP, mid, CREDITS_ASKED, sid);

	put16(b, 25);
	b[3] = 1;				/* security mode: signing enabled */
	put16(b + 12, SMB2_HDR + 24);		/* security buffer offset, length */
	put16(b + 14, (uint16_t)blen);
	memcpy(b + 24, blob, blen);
	return len;
}

/* TREE_CONNECT to \\host\IPC$: a connection without one is closed by smbd after a minute. */
static size_t tree_req(uint8_t *p, uint64_t mid, uint64_t sid, const char *host)
{
	char path[300];
	size_t n = (size_t)snprintf(path, sizeof(path), "\\\\%.280s\\IPC$", host);
	size_t len = NBT_HDR + SMB2_HDR + 8 + 2 * n;
	uint8_t *b = smb2_hdr(p, len, OP_TREE_CONNECT, mid, CREDITS_ASKED, sid);

	put16(b, 9);
	put16(b + 4, SMB2_HDR + 8);		/* path offset, length: UTF-16LE of ASCII */
	put16(b + 6, (uint16_t)(2 * n));
	for (size_t i = 0; i < n; i++)
		b[8 + 2 * i] = (uint8_t)path[i];
	return len;
}

static void echo_req(uint8_t *p, uint64_t mid, uint16_t credits)
{
	put16(smb2_hdr(p, ECHO_LEN, OP_ECHO, mid, credits, 0), 4);
}

/* A connected TCP socket to the server within timeout_ms, blocking, or -errno. */
static int connect_to(const struct addrinfo *ai, unsigned timeout_ms)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int fd, err = 0;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
		err = -errno;
		goto fail;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&pfd, 1, (int)timeout_ms) <= 0) {
		err = -ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0 || err) {
		err = -(err ? err : errno);
		goto fail;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return err;
}

/* Reads one SMB2 response (NBT length prefix, then at most len bytes of it); its length or -errno. */
static ssize_t read_pdu(int fd, uint8_t *buf, size_t len)
{
	uint8_t nbt[NBT_HDR];
	size_t n, got;

	for (got = 0; got < NBT_HDR; ) {
		ssize_t r = read(fd, nbt + got, NBT_HDR - got);

		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		got += (size_t)r;
	}
	n = (size_t)nbt[1] << 16 | (size_t)nbt[2] << 8 | nbt[3];
	if (n < SMB2_HDR || n > len)
		return -EPROTO;
	for (got = 0; got < n; ) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		got += (size_t)r;
	}
	return (ssize_t)n;
}

/*
 * Sends one request and reads its answer, which must have status `want`; the answer's session
 * id goes to *sid. 0, or -errno with msg.
 */
static int exchange(int fd, const uint8_t *req, size_t len, uint32_t want, uint64_t *sid,
		    const char *where, char *msg, size_t mlen)
{
	static const char *const names[] = {
		[OP_NEGOTIATE] = "NEGOTIATE", [OP_SESSION_SETUP] = "SESSION_SETUP",
		[OP_TREE_CONNECT] = "TREE_CONNECT", [OP_ECHO] = "ECHO",
	};
	uint16_t op = get16(req + NBT_HDR + 12);
	const char *what = names[op];
	uint8_t rsp[4096];
	ssize_t n;

	if (write(fd, req, len) != (ssize_t)len) {
		snprintf(msg, mlen, "%s: sending SMB2 %s: %s", where, what, strerror(errno));
		return -EIO;
	}
	n = read_pdu(fd, rsp, sizeof(rsp));
	if (n < 0) {
		snprintf(msg, mlen, "%s: no answer to SMB2 %s: %s", where, what,
			 n == -EAGAIN ? "timed out" : n == -EPROTO ? "not an SMB2 response"
						      : strerror((int)-n));
		return n == -EAGAIN ? -ETIMEDOUT : (int)n;
	}
	if (get32(rsp) != 0x424d53fe || get16(rsp + 12) != op) {
		snprintf(msg, mlen, "%s: the answer to SMB2 %s is not one", where, what);
		return -EPROTO;
	}
	if (get32(rsp + 8) != want) {
		snprintf(msg, mlen, "%s: the server answers SMB2 %s with status 0x%08x", where,
			 what, get32(rsp + 8));
		return -EPROTO;
	}
	if (sid)
		*sid = get64(rsp + 40);
	return 0;
}

/*
 * A new stalled connection: connected, negotiated, with an anonymous session and a tree
 * connect to IPC$ when st->anonymous, one ECHO answered (the credits to stream with); then
 * non-blocking, ready for top_up(). Returns 0, or -errno with msg.
 */
static int stall_open(struct stall *s, struct stall_setup *st, char *msg, size_t len)
{
	struct timeval tv = { st->timeout_ms / 1000, (st->timeout_ms % 1000) * 1000 };
	uint8_t req[REQ_MAX];
	uint64_t mid = 1, sid = 0;
	int fd, ret;

	fd = connect_to(st->ai, st->timeout_ms);
	if (fd < 0) {
		snprintf(msg, len, "cannot connect to %s: %s", st->where, strerror(-fd));
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ret = exchange(fd, req, negotiate_req(req, st->guid++), 0, NULL, st->where, msg, len);
	if (!ret && st->anonymous) {
		ret = exchange(fd, req, session_req(req, mid++, 0, ntlm_negotiate,
						    sizeof(ntlm_negotiate) - 1),
			       MORE_PROCESSING, &sid, st->where, msg, len);
		if (!ret)
			ret = exchange(fd, req, session_req(req, mid++, sid, ntlm_authenticate,
							    sizeof(ntlm_authenticate) - 1),
				       0, NULL, st->where, msg, len);
		if (!ret)
			ret = exchange(fd, req, tree_req(req, mid++, sid, st->host), 0, NULL,
				       st->where, msg, len);
	}
	if (!ret) {
		echo_req(req, mid++, CREDITS_FIRST);
		ret = exchange(fd, req, ECHO_LEN, 0, NULL, st->where, msg, len);
	}
	if (ret) {
		close(fd);
		return ret;
	}
	/* what piles up should be the server's: this end keeps a small send queue */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ CLIENT_SNDBUF }, sizeof(int));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	s->fd = fd;
	s->mid0 = mid;
	s->off = s->got = 0;
	return 0;
}

/* Writes as much of the connection's ECHOs as its socket takes now (at most `rounds` writes). */
static int top_up(struct stall *s, int rounds)
{
	uint8_t buf[ECHO_LEN * (BATCH + 1)];

	while (rounds-- > 0 && s->off < STREAM_LEN) {
		uint64_t first = s->off / ECHO_LEN, skip = s->off % ECHO_LEN;
		uint64_t n = ECHOES - first < BATCH + 1 ? ECHOES - first : BATCH + 1;
		size_t len = (size_t)(n * ECHO_LEN - skip);
		ssize_t w;

		for (uint64_t i = 0; i < n; i++)
			echo_req(buf + i * ECHO_LEN, s->mid0 + first + i, CREDITS_ASKED);
		w = send(s->fd, buf + skip, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		s->off += (uint64_t)w;
		if ((size_t)w < len)
			return 0;	/* the socket is full */
	}
	return 0;
}

/*
 * At the end: reads every answer, then closes (see the top of the file); a request a write cut
 * in two is completed first. Those still not drained by the deadline are closed anyway.
 * Returns how many.
 */
static unsigned drain(struct stall *conns, struct pollfd *pfds, unsigned n, uint64_t deadline)
{
	static uint8_t buf[1 << 16];
	unsigned left = 0;

	for (unsigned i = 0; i < n; i++) {
		if (pfds[i].fd < 0)
			continue;
		left++;
		pfds[i].events = POLLIN | (conns[i].off % ECHO_LEN ? POLLOUT : 0);
	}
	while (left && ps_load_now_ns() < deadline) {
		if (poll(pfds, n, 100) <= 0)
			continue;
		for (unsigned i = 0; i < n; i++) {
			struct stall *s = &conns[i];
			ssize_t r = 0;

			if (pfds[i].fd < 0 || !pfds[i].revents)
				continue;
			if (pfds[i].revents & POLLOUT) {
				uint8_t req[ECHO_LEN];
				uint64_t skip = s->off % ECHO_LEN;

				echo_req(req, s->mid0 + s->off / ECHO_LEN, CREDITS_ASKED);
				r = send(s->fd, req + skip, ECHO_LEN - skip, MSG_DONTWAIT | MSG_NOSIGNAL);
				if (r > 0)
					s->off += (uint64_t)r;
				if (!(s->off % ECHO_LEN))
					pfds[i].events = POLLIN;
			}
			if (pfds[i].revents & (POLLIN | POLLERR | POLLHUP)) {
				r = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
				if (r > 0)
					s->got += (uint64_t)r;
			}
			if ((r < 0 && errno != EAGAIN) || (r == 0 && (pfds[i].revents & POLLIN)) ||
			    (s->got >= s->off && !(s->off % ECHO_LEN))) {
				close(pfds[i].fd);
				pfds[i].fd = -1;
				left--;
			}
		}
	}
	return left;
}

/* Opens stalled connection number f->taken + f->failed + 1 into s and pfd, and counts it. */
static int add_conn(struct stall *s, struct pollfd *pfd, struct stall_setup *st,
		    struct ps_load_fault *f)
{
	char msg[160];
	int ret;

	ret = stall_open(s, st, msg, sizeof(msg));
	if (ret) {
		if (!f->msg[0])
			snprintf(f->msg, sizeof(f->msg), "connection %llu: %s",
				 (unsigned long long)(f->taken + f->failed + 1), msg);
		__atomic_fetch_add(&f->failed, 1, __ATOMIC_RELAXED);
		return ret;
	}
	/* writable: room for more; RDHUP: the server ended it */
	*pfd = (struct pollfd){ .fd = s->fd, .events = POLLOUT | POLLRDHUP };
	__atomic_fetch_add(&f->taken, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->conns, 1, __ATOMIC_RELAXED);
	return 0;
}

int ps_load_net_stall(const struct ps_load_opts *o, struct ps_load_ctl *ctl,
		      struct ps_load_fault *f, uint64_t every)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct timespec nap = { 0, 5000000 };
	struct stall *conns = NULL, probe;
	struct stall_setup st = { .timeout_ms = o->timeout_ms, .anonymous = true };
	struct pollfd *pfds = NULL;
	uint64_t base, sent = 0;
	struct ps_smb_url u;
	struct rlimit rl;
	char where[80], msg[160], port[16], *host;
	unsigned n = 0, left;
	int ret;

	if (ps_smb_url_parse(o->target, &u)) {
		ps_load_fault_fail(f, -EINVAL, "%s: not an smb:// URL", o->target);
		return 1;
	}
	host = u.host;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		host[strlen(host) - 1] = '\0';
		host++;
	}
	snprintf(port, sizeof(port), "%u", u.port ? u.port : 445);
	snprintf(where, sizeof(where), "%.60s port %.6s", host, port);
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret) {
		ps_load_fault_fail(f, -EHOSTUNREACH, "%s: %s", host, gai_strerror(ret));
		return 1;
	}
	st.ai = ai;
	st.host = host;
	st.where = where;
	st.guid = ps_load_now_ns() ^ (uint64_t)getpid() << 40;
	/*
	 * A first connection, closed again: a server that will not serve this fails here. One
	 * that refuses the anonymous session still answers ECHO without one, so the fault goes on
	 * without (smbd then ends each connection after a minute: stderr says so at the end).
	 */
	ret = stall_open(&probe, &st, msg, sizeof(msg));
	if (ret == -EPROTO) {
		snprintf(f->note, sizeof(f->note), "no anonymous session (%.120s), so connections "
			 "live about a minute on Samba", msg);
		st.anonymous = false;
		ret = stall_open(&probe, &st, msg, sizeof(msg));
	}
	if (ret) {
		ps_load_fault_fail(f, ret, "%s", msg);
		goto out;
	}
	close(probe.fd);
	/* one descriptor per stalled connection: take the hard limit */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	conns = calloc(MAX_CONNS, sizeof(*conns));
	pfds = calloc(MAX_CONNS, sizeof(*pfds));
	if (!conns || !pfds) {
		ret = -ENOMEM;
		ps_load_fault_fail(f, ret, "out of memory");
		goto out;
	}
	__atomic_store_n(&f->state, PS_SLOT_READY, __ATOMIC_RELEASE);
	while (__atomic_load_n(&ctl->inject_go, __ATOMIC_ACQUIRE) == PS_LOAD_GO_WAIT)
		nanosleep(&nap, NULL);
	base = __atomic_load_n(&ctl->wl->ios, __ATOMIC_RELAXED);
	while (ps_load_inject_running(ctl)) {
		uint64_t due = ps_load_inject_due(ctl, f, base, every);
		bool behind = f->taken + f->failed < due && n < MAX_CONNS;

		if (f->taken + f->failed < due && n == MAX_CONNS)
			__atomic_store_n(&f->capped, MAX_CONNS, __ATOMIC_RELAXED);
		/* one new connection per round: the open ones are kept full meanwhile */
		if (behind && !add_conn(&conns[n], &pfds[n], &st, f))
			n++;
		/* keep every connection full: write more wherever the socket has room */
		if (poll(pfds, n, behind ? 0 : 5) <= 0)
			continue;
		for (unsigned i = 0; i < n; i++) {
			if (pfds[i].fd < 0 || !pfds[i].revents)
				continue;
			if (pfds[i].revents & (POLLERR | POLLHUP | POLLRDHUP)) {
				ret = -ECONNRESET;
			} else {
				uint64_t before = conns[i].off / ECHO_LEN;

				ret = top_up(&conns[i], 4);
				sent += conns[i].off / ECHO_LEN - before;
				/* all written: from now on only the server's end is watched */
				if (conns[i].off == STREAM_LEN)
					pfds[i].events = POLLRDHUP;
			}
			if (!ret)
				continue;
			/* what it held is free again */
			if (!f->msg[0])
				snprintf(f->msg, sizeof(f->msg), "connection %u to %s ended: %s",
					 i + 1, where, strerror(-ret));
			close(pfds[i].fd);
			pfds[i].fd = -1;
			__atomic_fetch_sub(&f->conns, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&f->sent, sent, __ATOMIC_RELAXED);
	}
	ret = 0;
	left = drain(conns, pfds, n, ps_load_now_ns() + DRAIN_NS);
	if (left) {
		size_t at = strlen(f->note);

		snprintf(f->note + at, sizeof(f->note) - at, "%s%u connection%s not drained in "
			 "%llu s, closed anyway: smbd may keep their processes", at ? "; " : "",
			 left, left == 1 ? "" : "s", DRAIN_NS / 1000000000ull);
	}
out:
	freeaddrinfo(ai);
	free(conns);
	free(pfds);
	return ret ? 1 : 0;
}
