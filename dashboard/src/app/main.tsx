/** Entry point: take the login fragment (if any) into sessionStorage, clear it, render the app. */
import { render } from 'preact';
import { takeLoginFragment } from './api';
import { App } from './app';
import './styles.css';

const next = takeLoginFragment(location.hash, sessionStorage);
// replaceState: the token leaves the address bar and the history entry (no reload, nothing sent).
if (next !== undefined) history.replaceState(null, '', `${location.pathname}#${next}`);
render(<App />, document.getElementById('app')!);
