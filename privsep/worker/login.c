/*
 * login.c - JOB_LOGIN: does a sandbox's tcp service still take logins?
 * runs in: sbx-worker's JOB_LOGIN (root, runtime deny filter)
 *
 * Its readiness probe (probe.c) once more, on its published port, as its
 * prober's uid (the top of its host range, let through by the port's
 * guard): postgres must answer a startup message with an authentication
 * request, redis AUTH and PING with +OK +PONG. A server whose connections
 * are all taken answers neither within LOGIN_MS. The monitor's login.c
 * asks, and takes only the code.
 */
#include <string.h>

#include "config.h"
#include "iox.h"
#include "job.h"
#include "login.h"
#include "probe.h"
#include "service.h"

#define LOGIN_MS	3000

int
login_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	struct job_login j;
	const struct service_cfg *s;
	struct probe_target t;
	uint32_t code = SBX_E_RUNTIME_FAILED;
	uid_t uid;

	memcpy(&j, job, len);
	if (!memchr(j.conn.name, '\0', sizeof(j.conn.name)) ||
	    !memchr(j.conn.user, '\0', sizeof(j.conn.user)) ||
	    !memchr(j.conn.database, '\0', sizeof(j.conn.database)) ||
	    !memchr(j.conn.password, '\0', sizeof(j.conn.password)) ||
	    (s = config_service(cfg, j.conn.name)) == NULL ||
	    !(s->transport & TRANSPORT_TCP) || j.conn.port == 0 ||
	    j.conn.port > 65535 || j.host_uid == 0 ||
	    j.host_uid > UINT32_MAX - (JOB_RANGE_UIDS - 1))
		return 1;
	uid = (uid_t)(j.host_uid + JOB_RANGE_UIDS - 1);
	t = (struct probe_target){ .kind = s->probe,
	    .port = (uint16_t)j.conn.port, .user = j.conn.user,
	    .database = j.conn.database, .password = j.conn.password };
	if (probe_ready(&t, uid, (gid_t)uid, now_ms() + LOGIN_MS) ==
	    PROBE_READY)
		code = SBX_OK;
	explicit_bzero(&j, sizeof(j));
	return write_all(fd, &code, sizeof(code), now_ms() + 5000) == 0 ? 0 : 1;
}
