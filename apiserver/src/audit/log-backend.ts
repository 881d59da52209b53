/**
 * The audit log backend (upstream plugin/pkg/audit/log with lumberjack): one JSON event per line
 * appended to --audit-log-path ('-' = stdout). Rotation as lumberjack's: before a write would take
 * the file past --audit-log-maxsize megabytes it is renamed to `<name>-<UTC time>.<ext>` and a new
 * one started; only the --audit-log-maxbackup newest backups are kept (0 = all), backups older
 * than --audit-log-maxage days are removed (0 = kept).
 *
 * Lines are queued and written together at the next tick (one write per batch, not per request),
 * with one asynchronous write in flight at a time: a synchronous write stalls the whole event loop
 * (every request, every TLS handshake) whenever the disk is slow — a node starting 110 containers
 * makes it so — where upstream's blocking mode blocks only the request's own goroutine. close()
 * writes what is left synchronously. A write error is logged once and counted, never fails a
 * request (upstream's blocking-mode error is logged too).
 */
import { close as closeFd, closeSync, existsSync, fstatSync, openSync, readdirSync, renameSync, statSync, unlinkSync, write as writeFd, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Clock, Logger } from '@mk8s/component-base';

export interface AuditBackend {
  /** Queues one event (already serialized, without newline). Called concurrently; never throws. */
  write(line: string): void;
  /** Writes everything queued and releases the file. */
  close(): void;
}

export interface LogBackendOptions {
  path: string;
  /** Megabytes before rotation; 0 = never. @default 100 (upstream's lumberjack default) */
  maxSizeMB?: number;
  /** Backups kept; 0 = all. @default 0 */
  maxBackups?: number;
  /** Days a backup is kept; 0 = forever. @default 0 */
  maxAgeDays?: number;
  clock: Clock;
  logger?: Logger;
  /** Batching: how the next flush is scheduled. @default setImmediate */
  schedule?: (fn: () => void) => void;
  /** How a batch reaches the file. @default fs.write (asynchronous) */
  writeFile?: (fd: number, data: Buffer, done: (err: Error | null) => void) => void;
}

const asyncWrite = (fd: number, data: Buffer, done: (err: Error | null) => void): void => {
  writeFd(fd, data, (err) => done(err));
};

export class LogBackend implements AuditBackend {
  private fd: number | undefined;
  private size = 0;
  private queue: string[] = [];
  private scheduled = false;
  private failed = false;
  private readonly maxBytes: number;
  private readonly schedule: (fn: () => void) => void;
  private readonly writeFile: (fd: number, data: Buffer, done: (err: Error | null) => void) => void;
  private inFlight = false;
  private closeAfterWrite: number | undefined;

  constructor(private readonly o: LogBackendOptions) {
    this.maxBytes = (o.maxSizeMB ?? 100) * 1024 * 1024;
    this.schedule = o.schedule ?? ((fn) => setImmediate(fn));
    this.writeFile = o.writeFile ?? asyncWrite;
    if (o.path !== '-') this.open();
  }

  write(line: string): void {
    this.queue.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  flush(): void {
    this.scheduled = false;
    // One write in flight: what queues meanwhile goes in the next batch, when it completes.
    if (this.queue.length === 0 || this.inFlight || this.fd === undefined && this.o.path !== '-') return;
    const data = this.take();
    try {
      if (this.o.path === '-') { writeSync(1, data); return; }
      // Rotation only between writes: no write is in flight on the file being renamed.
      if (this.maxBytes > 0 && this.size > 0 && this.size + data.length > this.maxBytes) this.rotate();
      this.size += data.length;
      this.inFlight = true;
      const fd = this.fd!;
      this.writeFile(fd, data, (err) => {
        this.inFlight = false;
        if (err) this.failedWrite(err);
        if (this.closeAfterWrite === fd) { closeFd(fd, () => undefined); this.closeAfterWrite = undefined; return; }
        if (this.queue.length > 0 && !this.scheduled) this.flush();
      });
    } catch (err) {
      this.inFlight = false;
      this.failedWrite(err);
    }
  }

  /**
   * Writes what is queued now (synchronously) and releases the file once a write in flight is done.
   * At shutdown a batch still in flight may land after these lines: order, not content, may differ.
   */
  close(): void {
    if (this.queue.length > 0 && this.o.path !== '-' && this.fd !== undefined) {
      try { const data = this.take(); writeSync(this.fd, data); this.size += data.length; } catch (err) { this.failedWrite(err); }
    } else if (this.o.path === '-') this.flush();
    if (this.fd !== undefined) {
      if (this.inFlight) this.closeAfterWrite = this.fd; else closeSync(this.fd);
    }
    this.fd = undefined;
  }

  private take(): Buffer {
    const data = Buffer.from(this.queue.join('\n') + '\n');
    this.queue = [];
    return data;
  }

  private failedWrite(err: unknown): void {
    if (!this.failed) this.o.logger?.error({ err, path: this.o.path }, 'Could not write the audit log');
    this.failed = true;
  }

  private open(): void {
    this.fd = openSync(this.o.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /** lumberjack's backup name: <name>-2006-01-02T15-04-05.000.<ext>, in UTC. */
  backupName(now: number): string {
    const ext = extname(this.o.path);
    const base = basename(this.o.path, ext);
    const stamp = new Date(now).toISOString().replace(/:/g, '-').replace('Z', '');
    return join(dirname(this.o.path), `${base}-${stamp}${ext}`);
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    let name = this.backupName(this.o.clock.now());
    for (let i = 1; existsSync(name); i++) name = `${this.backupName(this.o.clock.now())}.${i}`;
    renameSync(this.o.path, name);
    this.open();
    this.prune();
  }

  /** The backups of this log, newest first. */
  backups(): string[] {
    const ext = extname(this.o.path);
    const base = basename(this.o.path, ext);
    const dir = dirname(this.o.path);
    return readdirSync(dir).filter((f) => f.startsWith(`${base}-`) && f !== basename(this.o.path)).sort().reverse().map((f) => join(dir, f));
  }

  private prune(): void {
    const all = this.backups();
    const keep = this.o.maxBackups ?? 0;
    const maxAgeMs = (this.o.maxAgeDays ?? 0) * 86_400_000;
    all.forEach((f, i) => {
      const tooMany = keep > 0 && i >= keep;
      const tooOld = maxAgeMs > 0 && this.o.clock.now() - statSync(f).mtimeMs > maxAgeMs;
      if (tooMany || tooOld) { try { unlinkSync(f); } catch { /* gone already */ } }
    });
  }
}
