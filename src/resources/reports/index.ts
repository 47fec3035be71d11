/** Builds the reports resource (aggregations over endpoints). */
import type { EndpointService } from '../endpoints/service.js';
import { ReportService } from './service.js';

export function createReports(endpoints: EndpointService): ReportService {
  return new ReportService(endpoints);
}
