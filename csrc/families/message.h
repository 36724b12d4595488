/* message: the MPI transport of the pair loops (pair.h), which the
 * two-sided MPI kernels share (message.c, message_patterns.c,
 * message_scatter.c): point-to-point calls on the run's private
 * communicator, completed by MPI_Wait(all), which may block inside the
 * library, or by spinning on MPI_Test(all) (completion=test: the
 * busy-polling completion of seed 002). */
#ifndef FL_MESSAGE_H
#define FL_MESSAGE_H

#include "pair.h"

enum { MSG_TAG_DATA = 1, MSG_TAG_ACK = 2 };

/* A rank's state in the MPI loops; a kernel's own state starts with it. */
typedef struct {
    pair_state p;
    MPI_Comm comm;
    MPI_Request *req;  /* as many as the rank keeps outstanding at once */
    int test;          /* completion=test */
    char ack_in, ack_out; /* zero-byte acks */
} msg_pair;

static inline msg_pair *msg_of(pair_state *p)
{
    return (msg_pair *)p;
}

/* Completes req[0..n-1]. */
static inline void msg_complete(const msg_pair *m, MPI_Request *req, int n)
{
    if (!m->test) {
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        return;
    }
    int done = 0;
    if (n == 1)
        while (!done)
            MPI_Test(req, &done, MPI_STATUS_IGNORE);
    else
        while (!done)
            MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
}

static inline void msg_post_send(pair_state *p, int64_t i, int j)
{
    msg_pair *m = msg_of(p);
    MPI_Isend(pair_sslot(p, i), (int)p->count, MPI_BYTE, p->peer, MSG_TAG_DATA, m->comm,
              &m->req[j]);
}

static inline void msg_post_recv(pair_state *p, int64_t i, int j)
{
    msg_pair *m = msg_of(p);
    MPI_Irecv(pair_rslot(p, i), (int)p->count, MPI_BYTE, p->peer, MSG_TAG_DATA, m->comm,
              &m->req[j]);
}

/* A window's sends or receives: requests 0..n-1. */
static inline void msg_wait(pair_state *p, int64_t d, int n)
{
    (void)d;
    msg_complete(msg_of(p), msg_of(p)->req, n);
}

/* An exchange: requests 0..2n-1. */
static inline void msg_wait_all(pair_state *p, int64_t d, int n)
{
    msg_wait(p, d, 2 * n);
}

/* One message and its completion: MPI_Send and MPI_Recv, or their
 * non-blocking forms completed by spinning on MPI_Test. */
static inline void msg_send_one(msg_pair *m, const void *buf, int count, int tag)
{
    if (!m->test) {
        MPI_Send(buf, count, MPI_BYTE, m->p.peer, tag, m->comm);
        return;
    }
    MPI_Isend(buf, count, MPI_BYTE, m->p.peer, tag, m->comm, m->req);
    msg_complete(m, m->req, 1);
}

static inline void msg_recv_one(msg_pair *m, void *buf, int count, int tag)
{
    if (!m->test) {
        MPI_Recv(buf, count, MPI_BYTE, m->p.peer, tag, m->comm, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Irecv(buf, count, MPI_BYTE, m->p.peer, tag, m->comm, m->req);
    msg_complete(m, m->req, 1);
}

static inline void msg_send(pair_state *p, int64_t i)
{
    msg_send_one(msg_of(p), pair_sslot(p, i), (int)p->count, MSG_TAG_DATA);
}

static inline void msg_recv(pair_state *p, int64_t i)
{
    msg_recv_one(msg_of(p), pair_rslot(p, i), (int)p->count, MSG_TAG_DATA);
}

static inline void msg_ack_recv(pair_state *p)
{
    msg_recv_one(msg_of(p), &msg_of(p)->ack_in, 0, MSG_TAG_ACK);
}

/* The receiver's ack is a blocking send in either completion. */
static inline void msg_ack_send(pair_state *p)
{
    msg_pair *m = msg_of(p);
    MPI_Send(&m->ack_out, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, m->comm);
}

static inline void msg_ack_swap(pair_state *p)
{
    msg_pair *m = msg_of(p);
    MPI_Irecv(&m->ack_in, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, m->comm, &m->req[0]);
    MPI_Isend(&m->ack_out, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, m->comm, &m->req[1]);
    MPI_Waitall(2, m->req, MPI_STATUSES_IGNORE);
}

static const pair_ops msg_ops = {
    .post_send = msg_post_send, .post_recv = msg_post_recv, .wait_sends = msg_wait,
    .wait_recvs = msg_wait, .wait_all = msg_wait_all, .send = msg_send, .recv = msg_recv,
    .ack_recv = msg_ack_recv, .ack_send = msg_ack_send, .ack_swap = msg_ack_swap,
};

#endif
