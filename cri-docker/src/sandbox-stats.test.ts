import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNetDev } from './sandbox-stats.js';

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:     840      10    0    0    0     0          0         0      840      10    0    0    0     0       0          0
  eth0:  123456     321    2    0    0     0          0         0    65432     210    1    0    0     0       0          0
 net1: 7 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0
garbage line
`;

test('parseNetDev reads bytes and errors per interface, without loopback', () => {
  assert.deepEqual(parseNetDev(NET_DEV), [
    { name: 'eth0', rxBytes: { value: 123456 }, rxErrors: { value: 2 }, txBytes: { value: 65432 }, txErrors: { value: 1 } },
    { name: 'net1', rxBytes: { value: 7 }, rxErrors: { value: 0 }, txBytes: { value: 9 }, txErrors: { value: 0 } },
  ]);
});

test('parseNetDev of an empty table is empty', () => assert.deepEqual(parseNetDev(''), []));
