import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN_KEY, takeLoginFragment } from './api';

test('the login fragment moves the token to storage and names the route to show', () => {
  const store = new Map<string, string>();
  const storage = { setItem: (k: string, v: string) => { store.set(k, v); } };
  assert.equal(takeLoginFragment('#token=abc&next=%2Fchain%2FDeployment%2Fdefault%2Fweb', storage), '/chain/Deployment/default/web');
  assert.equal(store.get(TOKEN_KEY), 'abc');
  assert.equal(takeLoginFragment('#token=xyz', storage), '/cluster');
  assert.equal(store.get(TOKEN_KEY), 'xyz');
  assert.equal(takeLoginFragment('#/pods', storage), undefined);
  assert.equal(takeLoginFragment('#token=t&next=https://evil', storage), '/cluster');
});
