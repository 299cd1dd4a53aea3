// Reading typed variables from the environment: each bad one is noted in `problems` and its fallback
// used, so that every bad variable is reported together.
export function envReader(env: NodeJS.ProcessEnv, problems: string[]) {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  const flag = (name: string): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
    if (raw === '1' || raw === 'true') return true;
    problems.push(`${name}=${JSON.stringify(raw)}: must be 0 or 1`);
    return false;
  };

  // Durations like 30d, 12h, 90m, 45s (a bare number is seconds); 0 only where `zeroOk`.
  const duration = (name: string, fallback: string, zeroOk: boolean): number => {
    const raw = env[name] || fallback;
    const m = /^(\d{1,9})([smhd]?)$/.exec(raw);
    const n = m
      ? Number(m[1]) * ({ '': 1, s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[m[2]]
      : NaN;
    if (!Number.isSafeInteger(n) || (n === 0 && !zeroOk) || n > 100 * 365 * 86400) {
      problems.push(
        `${name}=${JSON.stringify(raw)}: must be a duration like 30d, 12h, 90m or 45s${zeroOk ? ' (0 = forever)' : ''}`,
      );
      return 0;
    }
    return n;
  };
  return { int, flag, duration };
}
