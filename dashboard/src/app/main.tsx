/** Entry point: take the login fragment (if any) into sessionStorage, clear it, render the app. */
import { render } from 'preact';
import { takeLoginFragment } from './api';
import { App } from './app';
import './styles.css';

/** Takes a #token=… fragment: true when there was one (it is gone from the address bar and history). */
function takeLogin(): boolean {
  const next = takeLoginFragment(location.hash, sessionStorage);
  if (next === undefined) return false;
  // replaceState: the token leaves the address bar and the history entry (nothing is sent anywhere).
  history.replaceState(null, '', `${location.pathname}#${next}`);
  return true;
}

takeLogin();
// A login URL opened in a tab that already shows the app changes only the fragment (no load):
// take the token, then start afresh with it (the reload's URL no longer holds the token).
addEventListener('hashchange', () => { if (takeLogin()) location.reload(); });
render(<App />, document.getElementById('app')!);
