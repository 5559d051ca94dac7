/** A route's state: active, or paused by the circuit breaker (or by hand) until someone resumes it. */
export interface RouteState {
  readonly route: string;
  readonly state: 'active' | 'paused';
  readonly reason?: string;
  /** The key whose deliveries tripped the breaker. */
  readonly key?: string;
  readonly pausedAt?: number;
  readonly pausedBy?: string;
  readonly resumedAt?: number;
  /** The breaker's counts when it paused the route: the key's repeats, and the threshold they reached. */
  readonly repeats?: number;
  readonly threshold?: number;
  /** What to do, with the command that resumes the route. */
  readonly whatNow?: string;
}

export interface PauseRequest {
  readonly reason: string;
  readonly key?: string;
  readonly at: number;
  /** `circuit-breaker` or `operator`. */
  readonly by: string;
  readonly repeats?: number;
  readonly threshold?: number;
  readonly whatNow?: string;
}

export interface RouteStateStore {
  get(route: string): Promise<RouteState>;
  /** True for the one caller that paused an active route; false when it was paused already. */
  pause(route: string, request: PauseRequest): Promise<boolean>;
  /** True when a paused route became active. */
  resume(route: string, at: number): Promise<boolean>;
}
