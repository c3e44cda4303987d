/*
 * sbx_request.c - libsbx from C: ping the monitor, or ask for a sandbox
 * and print one "service host port user password database socket" line
 * each, "-" for what the service's transport does not give (unix: no
 * host and port but for postgres, whose host is the socket's directory;
 * tcp: no socket).
 *
 *	cc -o sbx_request sbx_request.c $(pkg-config --cflags --libs libsbx)
 *	./sbx_request /run/sbx.sock
 *	./sbx_request /run/sbx.sock my-agent my-project redis
 */
#include <stdio.h>

#include <sbx.h>

/* A string field of a map, printed as is ("-" when absent). */
static void
put_str(const msgpack_object *map, const char *key)
{
	const msgpack_object *o = sbxc_map_get(map, key);

	if (o != NULL && o->type == MSGPACK_OBJECT_STR)
		printf(" %.*s", (int)o->via.str.size, o->via.str.ptr);
	else
		printf(" -");
}

static const char *
or_dash(const char *s)
{
	return s[0] != '\0' ? s : "-";
}

static int
print_services(const msgpack_object *svcs)
{
	struct sbxc_service s;
	struct sbxc_error err;
	uint32_t i;

	for (i = 0; svcs->type == MSGPACK_OBJECT_MAP && i < svcs->via.map.size;
	    i++) {
		if (sbxc_service_parse(&svcs->via.map.ptr[i].key,
		    &svcs->via.map.ptr[i].val, &s, &err) != SBXC_OK) {
			fprintf(stderr, "sbx_request: %s\n", err.msg);
			return 4;
		}
		/* connect(2) to s.socket, or to s.host:s.port; for postgres,
		 * PQconnectdb("host=<s.host> port=<s.port> ...") does either */
		printf("%s %s ", s.name, or_dash(s.host));
		if (s.port != 0)
			printf("%u", s.port);
		else
			printf("-");
		printf(" %s %s %s %s\n", s.user, s.password, s.database,
		    or_dash(s.socket));
	}
	return 0;
}

static int
print_reply(const msgpack_object *reply)
{
	const msgpack_object *ok = sbxc_map_get(reply, "ok"), *svcs;

	if (ok == NULL || ok->type != MSGPACK_OBJECT_BOOLEAN || !ok->via.boolean) {
		printf("refused:");
		put_str(reply, "error");
		put_str(reply, "message");
		printf("\n");
		return 1;
	}
	if ((svcs = sbxc_map_get(reply, "services")) == NULL) {
		put_str(reply, "version");	/* ping */
		printf("\n");
		return 0;
	}
	return print_services(svcs);
}

int
main(int argc, char *argv[])
{
	struct sbxc_req req = { .op = "ping" };
	struct sbxc_error err;
	msgpack_unpacked reply;
	int rc;

	if (argc == 1 || argc == 3) {
		fprintf(stderr, "usage: sbx_request socket [agent project "
		    "service ...]\n");
		return 2;
	}
	if (argc > 3) {
		req.op = "request_sandbox";
		req.agent = argv[2];
		req.project = argv[3];
		req.services = (const char *const *)argv + 4;
		req.nservices = (size_t)argc - 4;
	}
	if (sbxc_call(argv[1], &req, NULL, &reply, &err) != SBXC_OK) {
		fprintf(stderr, "sbx_request: %s\n", err.msg);
		return 3;
	}
	rc = print_reply(&reply.data);
	msgpack_unpacked_destroy(&reply);
	return rc;
}
