// clients.js - the npm clients of tests/frameworks/run.sh, each given
// REDIS_URL or DATABASE_URL as `sbx request` printed it:
//   node clients.js url|pg
//   node clients.js ioredis|node-redis VALUE   (sets fw:CLIENT to VALUE)
//   node clients.js bullmq
// prints what it read back and exits 0, or says why and exits 1; a
// client that keeps reconnecting is cut off after 30 s (exit 2).
'use strict';

const redisUrl = () => process.env.REDIS_URL;
const dbUrl = () => process.env.DATABASE_URL;

const clients = {
	// Node's WHATWG URL: the fields a library takes from each URL, and
	// libpq's host and port parameters ('-' when absent).
	async url() {
		for (const name of ['REDIS_URL', 'DATABASE_URL', 'POSTGRES_URL']) {
			const u = new URL(process.env[name]);
			const q = (k) => u.searchParams.get(k) || '-';
			console.log([name, u.protocol, u.hostname || '-', u.port || '-',
			    decodeURIComponent(u.username),
			    decodeURIComponent(u.password),
			    decodeURIComponent(u.pathname), q('host'), q('port')].join(' '));
		}
	},

	async ioredis() {
		const Redis = require('ioredis');
		const r = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
		await r.set('fw:ioredis', process.argv[3]);
		console.log(await r.get('fw:ioredis'));
		await r.quit();
	},

	// A Queue and a Worker on their own connections; the job's state
	// and result are read back once the Worker says it completed it.
	// Prints the job's id, which run.sh looks up in redis itself.
	async bullmq() {
		const { Queue, Worker, Job } = require('bullmq');
		const Redis = require('ioredis');
		const conn = () => new Redis(redisUrl(), { maxRetriesPerRequest: null });
		const queue = new Queue('fw', { connection: conn() });
		const worker = new Worker('fw', async (job) => job.data.x + job.data.y,
		    { connection: conn() });
		const done = new Promise((resolve, reject) => {
			worker.on('completed', (job) => resolve(job.id));
			worker.on('failed', (job, err) => reject(err));
			worker.on('error', reject);
		});
		const job = await queue.add('add', { x: 40, y: 2 });
		const id = await done;
		const seen = await Job.fromId(queue, job.id);
		if (id !== job.id)
			throw new Error(`the Worker completed job ${id}, not ${job.id}`);
		console.log(id, await seen.getState(), seen.returnvalue);
		await worker.close();
		await queue.close();
	},

	'node-redis': async () => {
		const { createClient } = require('redis');
		const c = createClient({ url: redisUrl() });
		c.on('error', (e) => { console.error(`node-redis: ${e.message}`); process.exit(1); });
		await c.connect();
		await c.set('fw:node-redis', process.argv[3]);
		console.log(await c.get('fw:node-redis'));
		await c.quit();
	},

	async pg() {
		const { Client } = require('pg');
		const c = new Client({ connectionString: dbUrl() });
		await c.connect();
		await c.query("insert into fw_widgets (name) values ('pg')");
		const r = await c.query('select 40 + 2 as n');
		console.log(r.rows[0].n);
		await c.end();
	},
};

const run = clients[process.argv[2]];
if (run === undefined) {
	console.error(`usage: node clients.js ${Object.keys(clients).join('|')}`);
	process.exit(1);
}
setTimeout(() => { console.error('no answer in 30 s'); process.exit(2); }, 30000);
run().then(() => process.exit(0),
    (e) => { console.error(`${process.argv[2]}: ${e.message}`); process.exit(1); });
