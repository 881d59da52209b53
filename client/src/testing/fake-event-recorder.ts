import type { EventRecorder, EventType } from '../interfaces.js';
import { formatMessage } from '../format.js';

/** FakeEventRecorder (client-go record.FakeRecorder): keeps "Type Reason message" strings. */
export class FakeEventRecorder implements EventRecorder {
  readonly events: string[] = [];
  /** Structured copies, for assertions on the object an event was about. */
  readonly recorded: { object: unknown; type: EventType; reason: string; message: string }[] = [];
  event(obj: unknown, type: EventType, reason: string, messageFmt: string, ...args: unknown[]): void {
    const message = formatMessage(messageFmt, args);
    this.events.push(`${type} ${reason} ${message}`);
    this.recorded.push({ object: obj, type, reason, message });
  }
}
