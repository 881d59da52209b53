/** metav1.Status bodies for the answers the dashboard gives itself (the apiserver's pass through). */
export interface StatusBody {
  kind: 'Status'; apiVersion: 'v1'; metadata: Record<string, never>; status: 'Failure';
  message: string; reason: string; code: number;
}

export function failure(code: number, reason: string, message: string): StatusBody {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}
