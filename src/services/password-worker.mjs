// The entry of the password threads (passwords.ts PasswordWork): argon2id hashes and checks, run
// synchronously on this thread, which lowers its own CPU priority first. On Linux a nice value belongs
// to the thread that sets it (setpriority on the calling task), so the API's event loop, the database
// and the renders keep theirs: when the cores are contended, a burst of sign-ins waits for them, not
// they for it. Plain JavaScript: it needs nothing of the sources.
import os from 'node:os';
import { workerData } from 'node:worker_threads';
import { hashSync, verifySync } from '@node-rs/argon2';

try {
  os.setPriority(workerData.nice); // PASSWORD_THREAD_NICE
} catch {
  // refused (lowering a thread's priority is always allowed on Linux): it keeps the default one
}

/** `{ op: 'hash', password, options }` → the digest; `{ op: 'verify', digest, password }` → a boolean. */
export default function work(task) {
  if (task.op === 'hash') return hashSync(task.password, task.options);
  try {
    return verifySync(task.digest, task.password);
  } catch {
    return false; // a digest that is not argon2's
  }
}
