"""The text of the sample handbook (fictional; written for longqa's quick start)."""

HANDBOOK_HTML = """
<h1>Kestrel Valley Water Treatment Works: Operations Handbook</h1>
<p><b>Edition 4, March 2024.</b> This handbook describes how the Kestrel Valley Water Treatment
Works is run from day to day: where its water comes from, how it is treated, what is measured and
how often, how the equipment is maintained, and what operators do when something goes wrong. It is
written for shift operators, maintenance technicians and the duty manager. Where this handbook and
a manufacturer's manual disagree, the duty manager decides and records the decision in the site log.</p>

<h2>1. About the Works</h2>
<h3>1.1 History</h3>
<p>The works opened in 1987 to replace three small borehole stations that could no longer meet the
demand of the growing towns of Hollin Bridge and Marrow End. It was extended in 2006 with a second
filtration hall, and in 2019 the chlorine gas system was replaced by on-site generation of sodium
hypochlorite, which removed the largest chemical hazard on the site. The control room was rebuilt in
2021 and now runs a single supervisory system for the intake, the treatment stages and the
distribution pumps.</p>
<h3>1.2 Capacity and demand</h3>
<p>The works is licensed to abstract up to 68 megalitres per day (Ml/d) from the Kestrel River and
can treat a sustained 54 Ml/d, with a short-term peak of 61 Ml/d for up to 72 hours. Average daily
output in 2023 was 41.3 Ml/d. Demand peaks in late July and early August, when garden watering and
visitors to the valley push output above 50 Ml/d on hot days. The works supplies about 118,000
people through 640 kilometres of mains and two service reservoirs, Greystone (22 Ml) and Tallow Hill
(9 Ml).</p>
<h3>1.3 Organisation</h3>
<p>The site is staffed around the clock. Each shift has a shift operator and an assistant operator;
a maintenance technician works day shifts from Monday to Friday and is on call at other times. The
duty manager is the single point of authority for any decision that affects water quality or
supply, including the decision to stop putting water into supply.</p>

<h2>2. Raw Water Intake</h2>
<h3>2.1 River intake and screens</h3>
<p>Raw water enters through a side-channel intake on the north bank of the Kestrel River. Coarse
bar screens with 40 mm spacing stop branches and debris; behind them, two rotating band screens
with 6 mm mesh remove leaves and smaller material. The band screens rotate automatically when the
level difference across them exceeds 150 mm, and at least once every four hours regardless of
level. Screenings are washed, bagged and removed weekly.</p>
<h3>2.2 Raw water storage</h3>
<p>From the intake, four low-lift pumps move water to the Ashcombe raw water reservoir, which holds
about 1,900 megalitres, enough for roughly 35 days at average output. The reservoir lets operators
stop abstraction when the river is of poor quality, for example after heavy rain upstream or when
the river authority reports a pollution incident. Abstraction is suspended automatically when river
turbidity exceeds 120 NTU for more than 30 minutes.</p>
<h3>2.3 Algae management</h3>
<p>In warm, still weather the reservoir can develop blooms of blue-green algae. Operators check the
algae probe readings every shift between May and September. When chlorophyll readings exceed
25 micrograms per litre, the draw-off is moved to a deeper valve on the outlet tower and powdered
activated carbon dosing is started at the works inlet at 10 to 20 milligrams per litre.</p>

<h2>3. Treatment Process</h2>
<p>Treatment follows four stages: coagulation and flocculation, clarification, rapid gravity
filtration and disinfection. The stages are sized for 54 Ml/d with one stream out of service.</p>
<h3>3.1 Coagulation and flocculation</h3>
<p>Ferric sulphate is the coagulant. It is dosed at the flash mixer at 18 to 40 milligrams per litre,
depending on raw water colour and turbidity, with the pH held between 4.8 and 5.2 by dosing lime.
The jar test is repeated whenever raw water turbidity changes by more than 20 percent, and at least
once a day. The flocculation tanks give 20 minutes of gentle mixing at average flow.</p>
<h3>3.2 Clarification</h3>
<p>Four dissolved air flotation units float the floc to the surface, where it is scraped off as
sludge. Each unit treats up to 15 Ml/d. Clarified water should leave the units below 1.0 NTU; two
consecutive readings above 1.5 NTU trigger an alarm and an operator check of the saturator and the
recycle pumps.</p>
<h3>3.3 Filtration</h3>
<p>Twelve rapid gravity filters, six in each hall, hold 0.9 metres of sand under 0.3 metres of
anthracite. A filter is backwashed when its head loss reaches 2.2 metres, when filtered turbidity
rises above 0.2 NTU, or after 72 hours in service, whichever comes first. A backwash uses air scour
for 4 minutes followed by a water wash of about 180 cubic metres. After a backwash the first
15 minutes of filtrate are run to waste.</p>
<h3>3.4 Disinfection</h3>
<p>Filtered water is disinfected with sodium hypochlorite made on site by electrolysis of brine.
The target free chlorine residual leaving the contact tank is 0.8 milligrams per litre, with a
minimum contact time of 30 minutes at peak flow. Orthophosphate is dosed at 1.0 milligram per litre
as phosphorus to reduce lead pick-up in older customer pipework, and the pH is corrected to between
7.6 and 7.9 before water leaves the site.</p>

<h3>3.5 Sludge treatment</h3>
<p>Sludge from the flotation units and dirty backwash water from the filters flow to two washwater
recovery tanks. After settling for at least four hours, the clear water above the sludge is pumped
back to the works inlet at no more than 10 percent of the inlet flow, so that recycled water never
dominates what is being treated. The thickened sludge, at about 3 percent dry solids, is dosed with
polymer and pressed in a plate filter press to a cake of 28 to 32 percent dry solids. The cake is
taken away for use on farmland under a permit that limits aluminium and iron loads per hectare.
About 2,300 tonnes of cake left the site in 2023.</p>
<h3>3.6 Chemical stocks</h3>
<p>Minimum stocks are set so that the works can run for at least 10 days at peak output without a
delivery: 95 tonnes of ferric sulphate, 40 tonnes of lime, 60 tonnes of salt for hypochlorite
generation and 6 tonnes of orthophosphoric acid. Stocks are read every Monday and ordered when
they fall below 14 days at the current dose rate. Every delivery is checked against its certificate
of analysis before it is unloaded, and a sample is retained for three months.</p>

<h2>4. Water Quality Monitoring</h2>
<h3>4.1 Online instruments</h3>
<p>Online analysers measure turbidity on every filter outlet, and turbidity, free chlorine, pH and
conductivity on final water. Each analyser is checked against a laboratory reading every day and
calibrated every month. A failed analyser must be replaced or covered by manual sampling every two
hours until it is repaired.</p>
<h3>4.2 Sampling schedule and limits</h3>
<p>The table below lists the main final-water parameters, the limit the works works to (which is
stricter than the regulatory limit), and how often each is sampled.</p>
<table>
<tr><th>Parameter</th><th>Works limit</th><th>Regulatory limit</th><th>Sampling</th></tr>
<tr><td>Turbidity</td><td>0.3 NTU</td><td>1.0 NTU</td><td>Continuous and daily</td></tr>
<tr><td>Free chlorine</td><td>0.5 to 1.0 mg/l</td><td>none set</td><td>Continuous and daily</td></tr>
<tr><td>pH</td><td>7.6 to 7.9</td><td>6.5 to 9.5</td><td>Continuous and daily</td></tr>
<tr><td>Iron</td><td>50 ug/l</td><td>200 ug/l</td><td>Daily</td></tr>
<tr><td>Manganese</td><td>20 ug/l</td><td>50 ug/l</td><td>Daily</td></tr>
<tr><td>Aluminium</td><td>100 ug/l</td><td>200 ug/l</td><td>Weekly</td></tr>
<tr><td>E. coli</td><td>0 per 100 ml</td><td>0 per 100 ml</td><td>Daily</td></tr>
<tr><td>Trihalomethanes</td><td>60 ug/l</td><td>100 ug/l</td><td>Monthly</td></tr>
</table>
<h3>4.3 Responding to a failed sample</h3>
<p>Any E. coli detection in final water is reported to the duty manager at once. The sample is
repeated at the works and at the two service reservoirs within four hours, the chlorine residual is
raised to 1.2 milligrams per litre, and the regulator is informed within 24 hours. A second positive
result starts the incident procedure in section 6.</p>

<h3>4.4 Laboratory</h3>
<p>The site laboratory runs the daily chemical tests and prepares bacteriological samples for the
accredited laboratory in Hollin Bridge, which collects them twice a day. Laboratory results are
entered into the quality system by the analyst and checked by a second person before they count
towards compliance. Instruments in the laboratory are checked against certified reference
standards each week, and the laboratory takes part in a national proficiency scheme four times a
year. A sample that cannot be analysed within its holding time is discarded and taken again.</p>

<h2>5. Maintenance</h2>
<h3>5.1 Planned maintenance schedule</h3>
<p>Planned work is scheduled in the maintenance system and printed on the weekly sheet. The main
recurring tasks are listed below.</p>
<table>
<tr><th>Equipment</th><th>Task</th><th>Interval</th></tr>
<tr><td>Low-lift pumps</td><td>Vibration check and bearing grease</td><td>Monthly</td></tr>
<tr><td>Band screens</td><td>Mesh inspection and seal replacement</td><td>Every 6 months</td></tr>
<tr><td>Flotation saturators</td><td>Nozzle cleaning</td><td>Every 3 months</td></tr>
<tr><td>Filters</td><td>Media depth survey and core samples</td><td>Yearly</td></tr>
<tr><td>Hypochlorite cells</td><td>Acid clean of electrodes</td><td>Every 8 weeks</td></tr>
<tr><td>Standby generators</td><td>Load test for 2 hours</td><td>Monthly</td></tr>
<tr><td>Contact tank</td><td>Drain down and inspection</td><td>Every 5 years</td></tr>
</table>
<h3>5.2 Working on live plant</h3>
<p>No equipment is opened until it has been isolated, locked off and proved dead or empty, and the
isolation is recorded on a permit signed by the duty manager. Work in the contact tank, the
reservoir outlet tower or any chamber deeper than 1.5 metres is confined-space work and needs a
second person at the entry point and a gas monitor at all times.</p>

<h3>5.3 Critical spares</h3>
<p>Some failures would stop treatment outright, so spares for them are kept on site: one complete
low-lift pump and motor, a set of band screen mesh panels, two saturator pumps, one hypochlorite
electrolyser cell stack, a spare ferric sulphate dosing pump for each stream, and six filter
underdrain nozzles of each size. The spares list is reviewed every year in January against the
failures of the previous year; any spare used is reordered the same week.</p>

<h2>6. Emergency Procedures</h2>
<h3>6.1 Loss of mains power</h3>
<p>The works takes power from two independent 11 kV feeders. If both fail, two standby diesel
generators of 1.6 megawatts each start automatically and take the load within 45 seconds. Either
generator alone can run the treatment stages and the high-lift pumps at up to 40 Ml/d. The fuel
store holds 60,000 litres of diesel, enough to run both generators at full load for about
52 hours, or one generator for about 4 days. When the fuel level falls below 25,000 litres the duty
manager calls the fuel supplier under the emergency delivery contract, which promises a delivery
within 8 hours.</p>
<h3>6.2 Chemical leak or spill</h3>
<p>Bulk chemicals are stored in bunded tanks sized for 110 percent of their contents. If a leak is
found, operators stop the transfer pumps, keep clear of the bund, and call the duty manager.
Ferric sulphate and lime spills are contained with the spill kits at each delivery point;
hypochlorite spills must never be mixed with ferric sulphate, as the mixture releases chlorine gas.</p>
<h3>6.3 Stopping supply</h3>
<p>If water that may be unsafe has left the works, the duty manager can stop the high-lift pumps
and supply customers from the service reservoirs alone. At average demand Greystone and Tallow Hill
together last about 14 hours. Within the first hour the duty manager informs the regulator and the
public health team, and decides with them whether customers must be told to boil water.</p>

<h3>6.4 Flooding</h3>
<p>The intake and the low-lift pumping station lie within the river's flood plain. When the river
level gauge at Kestrel Bridge passes 3.2 metres, operators fit the flood boards to the pumping
station doors and move the mobile pumps to the intake yard. Above 3.8 metres the low-lift pumps are
stopped and the works draws only from Ashcombe reservoir, which is above any recorded flood level.
The treatment buildings stand 6 metres above the highest flood on record, in 1968.</p>

<h2>7. Staffing and Training</h2>
<p>The works employs 26 people: twelve shift operators and assistants on a five-shift rota, four
maintenance technicians, two laboratory analysts, an electrical and instrument engineer, a process
scientist, three administrative staff, a site manager and two duty managers who share the
on-call rota with managers from neighbouring works. New operators work alongside an experienced colleague for twelve weeks before they take a shift
alone, and must pass the site competence assessment covering every section of this handbook. All
operators complete a one-day refresher on emergency procedures every year, and a practical drill
on the loss-of-power procedure is run each spring and each autumn. Chemical handling training is
renewed every three years.</p>
<p>Every operator keeps a training record that lists the tasks they are signed off to do alone.
The record is reviewed with the site manager each year, and any task not performed for twelve
months must be refreshed under supervision before it is done alone again. Contractors working on
site receive a site induction that covers the emergency alarms, the muster point by the
administration building, and the rules for entering the chemical stores.</p>

<h2>8. Performance in 2023</h2>
<p>In 2023 the works treated 15,075 megalitres of water, an average of 41.3 Ml/d, with a peak day of
57.8 Ml/d on 9 August. Final water met the works limits in 99.6 percent of 9,412 samples; the
38 exceedances were all for turbidity or manganese and none breached a regulatory limit. There were
no E. coli detections in final water. Electricity use was 0.42 kilowatt-hours per cubic metre, down
from 0.47 in 2022 after the flotation recycle pumps were fitted with variable-speed drives. The
standby generators ran for 31 hours in total during two grid failures in January and November,
and supply to customers was not interrupted.</p>
<h3>8.1 Operating costs</h3>
<p>The operating cost of the works in 2023 was 3.94 million pounds, or 261 pounds per megalitre
treated. The split by category is shown below; the fall in chemical costs against 2022 came mainly
from a lower ferric sulphate price and from using less lime after the pH control was retuned.</p>
<table>
<tr><th>Category</th><th>2022 (thousand pounds)</th><th>2023 (thousand pounds)</th></tr>
<tr><td>Electricity</td><td>1,512</td><td>1,386</td></tr>
<tr><td>Chemicals</td><td>1,047</td><td>918</td></tr>
<tr><td>Staff</td><td>1,121</td><td>1,164</td></tr>
<tr><td>Maintenance and spares</td><td>296</td><td>327</td></tr>
<tr><td>Sludge disposal</td><td>139</td><td>145</td></tr>
<tr><td>Total</td><td>4,115</td><td>3,940</td></tr>
</table>
<h3>8.2 Plans for 2024 and 2025</h3>
<p>Three projects are planned. The first replaces the media in the six filters of the original
hall, which has not been changed since 2006. The second adds a third service reservoir of 12 Ml at
Marrow End, which will raise the storage available when supply from the works is stopped from
about 14 hours to about 22 hours at average demand. The third installs 1.1 megawatts of solar
panels on the former sludge lagoons, expected to supply about 18 percent of the site's electricity.</p>

<h2>9. Glossary</h2>
<p><b>Ml/d:</b> megalitres per day; one megalitre is one million litres. <b>NTU:</b> nephelometric
turbidity unit, a measure of how cloudy water is. <b>Free chlorine:</b> the chlorine present as
hypochlorous acid and hypochlorite, which does the disinfecting. <b>Contact time:</b> the time water
spends in contact with chlorine before it reaches the first customer. <b>Head loss:</b> the drop in
water pressure across a filter bed; it rises as the filter collects dirt. <b>Bund:</b> a wall or
basin around a tank that holds its contents if the tank leaks. <b>Jar test:</b> a bench test that
finds the coagulant dose that forms the best floc for the water of the day.</p>
"""
