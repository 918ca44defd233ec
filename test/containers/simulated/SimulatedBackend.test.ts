import { containerContract } from '../contract.js';
import { simulatedFixture } from './simulatedFixture.js';

containerContract('simulated cluster', simulatedFixture);
