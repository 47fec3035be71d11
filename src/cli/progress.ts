/**
 * A progress bar on stderr for long ops work. On a terminal it redraws one line; otherwise
 * (logs, pipes) it prints a plain line at the first update, then at most every 5 seconds,
 * and at the end, so a log file shows progress without thousands of lines.
 */
export interface ProgressStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export class ProgressBar {
  private lastDraw = 0;
  private lastLine = 0;
  private drawn = false;

  constructor(
    private label: string,
    private total: number,
    private readonly stream: ProgressStream = process.stderr,
  ) {}

  /** Starts a new phase on the same bar. */
  phase(label: string, total = this.total): void {
    if (this.drawn && this.stream.isTTY) this.stream.write('\n');
    this.label = label;
    this.total = total;
    this.drawn = false;
    this.lastLine = 0;
  }

  update(done: number, detail = ''): void {
    const now = Date.now();
    if (this.stream.isTTY) {
      if (now - this.lastDraw < 100 && done < this.total) return;
      this.lastDraw = now;
      this.stream.write(`\r${this.render(done, detail)}\x1b[K`);
    } else {
      if (this.drawn && now - this.lastLine < 5000) return;
      this.lastLine = now;
      this.stream.write(`${this.render(done, detail)}\n`);
    }
    this.drawn = true;
  }

  /** Draws the final state and ends the line. */
  finish(done: number, detail = ''): void {
    if (this.stream.isTTY) this.stream.write(`\r${this.render(done, detail)}\x1b[K\n`);
    else this.stream.write(`${this.render(done, detail)}\n`);
    this.drawn = false;
  }

  private render(done: number, detail: string): string {
    const width = 30;
    const ratio = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const filled = Math.round(ratio * width);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    const pct = `${Math.floor(ratio * 100)}`.padStart(3);
    return `${this.label} [${bar}] ${pct}% ${done.toLocaleString("en-US")}/${this.total.toLocaleString("en-US")}${detail ? `  ${detail}` : ''}`;
  }
}
