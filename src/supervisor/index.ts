/** roundtable's OTP layer over XState v5 actors. Imports no I/O. */
export * from './backoff.js';
export * from './call.js';
export * from './childSpec.js';
export * from './clock.js';
export * from './DynamicSupervisor.js';
export * from './errors.js';
export * from './events.js';
export * from './exitReason.js';
export * from './fromSafeCallback.js';
export * from './monitor.js';
export * from './Registry.js';
export * from './restartIntensity.js';
export * from './restartPolicy.js';
export * from './Supervisor.js';
export * from './supervisorSpec.js';
export * from './treeReducer.js';
export * from './watchExit.js';
