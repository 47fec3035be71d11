/** The operator console's entry point (bundled by scripts/build-console.ts). */
import { render } from 'preact';
import { App } from './app';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
