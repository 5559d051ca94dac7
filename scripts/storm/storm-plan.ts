/** The storm's plan moved to cli/storm/storm-plan.ts; the simulation and the ordering test still import its seeded random from here. */
export * from '../../cli/storm/storm-plan.ts';
