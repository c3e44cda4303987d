/*
 * rtdouble.h - the one test double of the runtime interface (struct
 * sbx_runtime), for the unit tests and the bench monitor (bench/rt_double.c)
 * alike, in the spirit of the seed's MagicMock: it records calls, answers
 * is_live as told, and completes provisions at once or when the test says.
 */
#ifndef SBX_RTDOUBLE_H
#define SBX_RTDOUBLE_H

#include <stdbool.h>

#include "cache.h"

#define RTD_MAX_CALLS	64

struct rtd_call {
	struct sbx_key	key;
	size_t		nservices;
	size_t		nkept;		/* a reshape's services kept running */
	size_t		ndropped;	/* and those it removes */
	char		services[SBX_MAX_SERVICES][SBX_SLUG_MAX];
};

struct rtdouble {
	bool		live;		/* what is_live answers */
	bool		deferred;	/* provisions wait for rtd_complete() */
	enum sbx_code	fail_with;	/* SBX_OK: succeed */
	int		refuse_teardowns; /* the next N cannot start (no worker) */
	int		refuse_provisions; /* the same, for provisions */
	int		fail_teardowns;	/* the next N the runtime refuses */
	unsigned	warm;		/* claims that succeed (warm sets) */
	int		provisions, teardowns, is_live_calls, claims;
	int		datas;		/* resets and snapshots started */
	bool		data_deferred;	/* they wait for rtd_data_complete() */
	enum sbx_code	data_code;	/* what they end with */
	struct sbx_sandbox *data_pending;
	bool		data_linger;	/* their worker runs on after the
					 * reply until rtd_data_exit() */
	int		data_running;	/* such workers */
	struct cache	*data_cache;	/* ...of this cache's */
	uid_t		data_owner;	/* ...and this owner's (the last) */
	char		data_snapshot[SBX_SLUG_MAX];	/* the last one's */
	struct rtd_call	prov[RTD_MAX_CALLS];	/* the last RTD_MAX_CALLS */
	struct rtd_call	live_calls[RTD_MAX_CALLS];
	struct sbx_sandbox *pending[RTD_MAX_CALLS];
	int		npending;
	unsigned	port_seq;
	int		claim_ports;	/* 0: a claim is done at once; 1: its
					 * ports' hand-over waits for
					 * rtd_claim_complete(); 2: no worker
					 * could take the hand-over */
	struct sbx_sandbox *claim_pending;
};

/* impl is a struct rtdouble. */
extern const struct sbx_runtime_ops rtd_ops;

/* Complete every deferred provision, oldest first. */
void	rtd_complete(struct rtdouble *);
/* End the claim whose ports wait (claim_ports 1) with code. */
void	rtd_claim_complete(struct rtdouble *, enum sbx_code);
/* End the deferred reset or snapshot with data_code. */
void	rtd_data_complete(struct rtdouble *);
/* The workers of resets and snapshots answered (data_linger) exit. */
void	rtd_data_exit(struct rtdouble *);

#endif
