import type { TransportState } from './types';

/** A transport's state and who listens to it: both transports report their changes this one way. */
export class TransportStateCell {
  private value: TransportState = 'closed';
  private readonly listeners = new Set<(state: TransportState) => void>();

  get current(): TransportState {
    return this.value;
  }

  /** Sets the state; listeners hear only changes. */
  set(state: TransportState): void {
    if (state === this.value) return;
    this.value = state;
    for (const listener of this.listeners) listener(state);
  }

  /** Adds a listener; the function returned removes it. */
  listen(listener: (state: TransportState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
